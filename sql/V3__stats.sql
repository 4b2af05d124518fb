-- The read side: hourly and daily totals, breakdowns by dimension, the job's event-time progress and the
-- salts of the daily visitor hash. Like click_counts, every row the stream writes holds whole totals and is
-- written by an upsert that never lowers it; only reconcile's repair lowers or deletes rows.

-- Minutes are kept 14 days by default (TALLY_MINUTE_RETENTION_DAYS); hours 400 days; days for ever.
CREATE TABLE click_hourly (
    code        TEXT        NOT NULL,
    hour        TIMESTAMPTZ NOT NULL,
    clicks      BIGINT      NOT NULL CHECK (clicks >= 0),
    bot_clicks  BIGINT      NOT NULL CHECK (bot_clicks >= 0),
    -- Distinct visitor hashes among the hour's human clicks (exact; see ADR-004).
    visitors    BIGINT      NOT NULL CHECK (visitors >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (code, hour),
    CHECK (extract(epoch FROM hour) :: BIGINT % 3600 = 0)
);
CREATE INDEX click_hourly_hour_idx ON click_hourly (hour);

-- Days are UTC days.
CREATE TABLE click_daily (
    code        TEXT        NOT NULL,
    day         DATE        NOT NULL,
    clicks      BIGINT      NOT NULL CHECK (clicks >= 0),
    bot_clicks  BIGINT      NOT NULL CHECK (bot_clicks >= 0),
    visitors    BIGINT      NOT NULL CHECK (visitors >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (code, day)
);
CREATE INDEX click_daily_day_idx ON click_daily (day);

-- Human clicks per value of country, referrer, browser, os and device; bot clicks per bot_kind.
CREATE TABLE click_dimensions_hourly (
    code        TEXT        NOT NULL,
    hour        TIMESTAMPTZ NOT NULL,
    dimension   TEXT        NOT NULL CHECK (dimension IN ('country', 'referrer', 'browser', 'os', 'device', 'bot_kind')),
    value       TEXT        NOT NULL,
    clicks      BIGINT      NOT NULL CHECK (clicks >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (code, dimension, hour, value),
    CHECK (extract(epoch FROM hour) :: BIGINT % 3600 = 0)
);
CREATE INDEX click_dimensions_hourly_hour_idx ON click_dimensions_hourly (hour);

-- How far the streaming job's event time has got: every minute before closed_before has had its on-time
-- firing, so its count is final unless a late click (within the allowed lateness) still arrives.
CREATE TABLE stream_progress (
    job           TEXT        PRIMARY KEY,
    closed_before TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The salt of each UTC day's visitor hash. Made on first use by any redirect-web instance, the next day's
-- ahead of time, and deleted 48 hours after its day began, so that a hash cannot be tied back to an
-- address once its salt is gone, not even by whoever holds the hashing secret.
CREATE TABLE visitor_salts (
    day         DATE        PRIMARY KEY,
    salt        BYTEA       NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The links list reads newest first.
CREATE INDEX links_created_at_idx ON links (created_at DESC, code DESC);

-- Reconcile compares every aggregate: its recount of the hourly, daily and dimension rows lands here.
CREATE UNLOGGED TABLE reconcile_recount_hourly (
    run_id      BIGINT      NOT NULL,
    code        TEXT        NOT NULL,
    hour        TIMESTAMPTZ NOT NULL,
    clicks      BIGINT      NOT NULL,
    bot_clicks  BIGINT      NOT NULL,
    visitors    BIGINT      NOT NULL,
    PRIMARY KEY (run_id, code, hour)
);
CREATE UNLOGGED TABLE reconcile_recount_daily (
    run_id      BIGINT      NOT NULL,
    code        TEXT        NOT NULL,
    day         DATE        NOT NULL,
    clicks      BIGINT      NOT NULL,
    bot_clicks  BIGINT      NOT NULL,
    visitors    BIGINT      NOT NULL,
    PRIMARY KEY (run_id, code, day)
);
CREATE UNLOGGED TABLE reconcile_recount_dimensions (
    run_id      BIGINT      NOT NULL,
    code        TEXT        NOT NULL,
    hour        TIMESTAMPTZ NOT NULL,
    dimension   TEXT        NOT NULL,
    value       TEXT        NOT NULL,
    clicks      BIGINT      NOT NULL,
    PRIMARY KEY (run_id, code, dimension, hour, value)
);

-- What a run found in each aggregate table.
ALTER TABLE reconcile_runs ADD COLUMN aggregates JSONB;
