-- What the click topic still covered when a run read it, and runs that refused to repair.
-- A run judges a link's minutes, hours and days only from where its partition's log still covers them
-- (retention deletes the start of each partition on its own); the rest is counted and left untouched.
ALTER TABLE reconcile_runs DROP CONSTRAINT reconcile_runs_status_check;
ALTER TABLE reconcile_runs ADD CONSTRAINT reconcile_runs_status_check
    CHECK (status IN ('running', 'finished', 'failed', 'refused'));
ALTER TABLE reconcile_runs
    -- Why a run changed nothing (status 'refused'): no topic, nothing read, or too many clicks removed.
    ADD COLUMN refused_reason        TEXT,
    -- Per partition: log start and end offsets, the earliest retained record's time and where coverage
    -- starts ("all", "none" or an instant).
    ADD COLUMN coverage              JSONB,
    -- (code, minute) rows in the range before their partition's coverage starts, left untouched.
    ADD COLUMN minutes_not_covered   BIGINT,
    -- Stored clicks of the minutes compared; clicks_removed of these is what --max-removed-share limits.
    ADD COLUMN stored_clicks_checked BIGINT,
    ADD COLUMN max_removed_share     DOUBLE PRECISION,
    ADD COLUMN forced                BOOLEAN;

-- Where the log's coverage starts for each link with a row in the range, for the aggregate tables'
-- comparison in SQL; rows are removed when their run ends. Unlogged: scratch space, like the recount.
CREATE UNLOGGED TABLE reconcile_coverage (
    run_id       BIGINT      NOT NULL,
    code         TEXT        NOT NULL,
    covered_from TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, code)
);
