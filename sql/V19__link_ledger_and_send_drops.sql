-- A link's audit ledger: per link and UTC hour, what the click job set aside instead of counting, by why.
-- Whole totals, written like every count row: a replay never lowers one.
CREATE TABLE link_ledger_hourly (
    code         TEXT        NOT NULL,
    hour         TIMESTAMPTZ NOT NULL,
    -- Copies of a click already counted (producer retries, replays).
    duplicates   BIGINT      NOT NULL DEFAULT 0 CHECK (duplicates >= 0),
    -- Clicks that came after their minute closed for good: dead letters, which reconcile counts.
    late         BIGINT      NOT NULL DEFAULT 0 CHECK (late >= 0),
    -- Rows PostgreSQL refused: dead letters.
    refused_rows BIGINT      NOT NULL DEFAULT 0 CHECK (refused_rows >= 0),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (code, hour),
    CHECK (hour = date_trunc('hour', hour))
);
CREATE INDEX link_ledger_hourly_hour_idx ON link_ledger_hourly (hour);

-- Clicks redirect-web answered but could not hand to Kafka (buffer full, broker down), per instance and
-- UTC minute, as whole totals of that instance's minute. Not per link: a dropped event is not kept.
CREATE TABLE click_send_drops (
    instance    TEXT        NOT NULL CHECK (length(instance) BETWEEN 1 AND 64),
    minute      TIMESTAMPTZ NOT NULL,
    dropped     BIGINT      NOT NULL CHECK (dropped >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (instance, minute),
    CHECK (minute = date_trunc('minute', minute))
);
CREATE INDEX click_send_drops_minute_idx ON click_send_drops (minute);

GRANT SELECT, INSERT, UPDATE ON link_ledger_hourly TO tally_click_job;
GRANT SELECT, DELETE ON link_ledger_hourly TO tally_redirect_web;
GRANT SELECT, INSERT, UPDATE, DELETE ON click_send_drops TO tally_redirect_web;
