-- One row per batch-reconcile run: what it read, what it found and what it changed.
CREATE TABLE reconcile_runs (
    id                   BIGSERIAL   PRIMARY KEY,
    range_from           TIMESTAMPTZ NOT NULL,
    range_to             TIMESTAMPTZ NOT NULL,
    -- Minutes ending after this instant were still live for the streaming job and were left alone.
    closed_before        TIMESTAMPTZ NOT NULL,
    mode                 TEXT        NOT NULL CHECK (mode IN ('repair', 'dry-run')),
    status               TEXT        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'failed')),
    started_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at          TIMESTAMPTZ,
    events_read          BIGINT,
    clicks_in_range      BIGINT,
    distinct_clicks      BIGINT,
    duplicates           BIGINT,
    malformed            JSONB,
    minutes_checked      BIGINT,
    minutes_differing    BIGINT,
    minutes_left_open    BIGINT,
    clicks_added         BIGINT,
    clicks_removed       BIGINT
);

-- The minutes a run found different, with both sides, so a drift can be investigated after the repair.
CREATE TABLE reconcile_drift (
    run_id               BIGINT      NOT NULL REFERENCES reconcile_runs (id) ON DELETE CASCADE,
    code                 TEXT        NOT NULL,
    minute               TIMESTAMPTZ NOT NULL,
    kind                 TEXT        NOT NULL CHECK (kind IN ('missing', 'unsupported', 'over', 'under', 'mixed')),
    stored_clicks        BIGINT,
    stored_bot_clicks    BIGINT,
    recounted_clicks     BIGINT,
    recounted_bot_clicks BIGINT,
    repaired             BOOLEAN     NOT NULL,
    PRIMARY KEY (run_id, code, minute)
);

-- Where the recount lands before it is compared; rows are removed when their run ends.
-- Unlogged: it is scratch space, rebuilt by running again.
CREATE UNLOGGED TABLE reconcile_recount (
    run_id      BIGINT      NOT NULL,
    code        TEXT        NOT NULL,
    minute      TIMESTAMPTZ NOT NULL,
    clicks      BIGINT      NOT NULL,
    bot_clicks  BIGINT      NOT NULL,
    PRIMARY KEY (run_id, code, minute)
);
