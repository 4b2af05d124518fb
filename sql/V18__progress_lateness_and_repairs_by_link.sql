-- A bucket is final once the job's event time has passed its end by the allowed lateness, after which no
-- late click can change it. The job writes its lateness beside its progress, so that the read side
-- judges with the lateness the job runs with (older rows keep the default of 5 minutes).
ALTER TABLE stream_progress ADD COLUMN allowed_lateness_ms BIGINT NOT NULL DEFAULT 300000
    CHECK (allowed_lateness_ms >= 0);

-- The stats API marks a link's buckets that reconcile repaired, and when.
CREATE INDEX reconcile_drift_repaired_idx ON reconcile_drift (code, minute) WHERE repaired;

-- The read side reads which runs repaired what; it writes none of it.
GRANT SELECT ON reconcile_runs, reconcile_drift TO tally_redirect_web;
