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
    -- By epoch, not date_trunc, which truncates in the session's time zone (an India one has no hour
    -- starting at a UTC hour).
    CHECK (extract(epoch FROM hour) :: BIGINT % 3600 = 0)
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
    CHECK (extract(epoch FROM minute) :: BIGINT % 60 = 0)
);
CREATE INDEX click_send_drops_minute_idx ON click_send_drops (minute);

-- The ledger lists the runs that found a link's minutes different, repaired or not: the index V18 made
-- for the repaired ones serves both.
DROP INDEX reconcile_drift_repaired_idx;
CREATE INDEX reconcile_drift_code_minute_idx ON reconcile_drift (code, minute);

GRANT SELECT, INSERT, UPDATE ON link_ledger_hourly TO tally_click_job;
GRANT SELECT, DELETE ON link_ledger_hourly TO tally_redirect_web;
GRANT SELECT, INSERT, UPDATE, DELETE ON click_send_drops TO tally_redirect_web;
