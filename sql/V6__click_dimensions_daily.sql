-- Breakdowns per UTC day, so that a breakdown over weeks reads one row per value and day rather than 24.
-- Each (code, day, dimension) keeps a bounded number of values, like an hour's; the clicks of the values it
-- does not keep are under '(other)' (ADR-006). The stats API reads a range's whole days here and its
-- edges from the hours. Kept for ever, like click_daily.
CREATE TABLE click_dimensions_daily (
    code        TEXT        NOT NULL,
    day         DATE        NOT NULL,
    dimension   TEXT        NOT NULL CHECK (dimension IN ('country', 'referrer', 'browser', 'os', 'device', 'bot_kind')),
    value       TEXT        NOT NULL,
    clicks      BIGINT      NOT NULL CHECK (clicks >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (code, dimension, day, value)
);
CREATE INDEX click_dimensions_daily_day_idx ON click_dimensions_daily (day);

CREATE UNLOGGED TABLE reconcile_recount_dimensions_daily (
    run_id      BIGINT      NOT NULL,
    code        TEXT        NOT NULL,
    day         DATE        NOT NULL,
    dimension   TEXT        NOT NULL,
    value       TEXT        NOT NULL,
    clicks      BIGINT      NOT NULL,
    PRIMARY KEY (run_id, code, dimension, day, value)
);

-- The days before this migration, from their hours (which kept every value).
INSERT INTO click_dimensions_daily (code, day, dimension, value, clicks)
SELECT code, (hour AT TIME ZONE 'UTC')::date, dimension, value, SUM(clicks)
FROM click_dimensions_hourly
GROUP BY code, (hour AT TIME ZONE 'UTC')::date, dimension, value;
