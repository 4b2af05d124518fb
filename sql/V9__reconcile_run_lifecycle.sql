-- A reconcile run as a Kubernetes job (docs/operations.md, "Reconcile as a Kubernetes job"). A run whose
-- process died no longer stays 'running' for ever: a live run beats every 20 s, and the next run marks one
-- silent for 2 minutes as 'abandoned' (its repair, one transaction per batch, kept what it committed).
-- run_key names one intended run, such as the Flink job id the Kubernetes operator fixes for a deployment:
-- started again under the same key (a restarted JobManager), a run takes the range its key first resolved,
-- and a key whose run ended is not run again.
ALTER TABLE reconcile_runs ADD COLUMN heartbeat_at TIMESTAMPTZ;
ALTER TABLE reconcile_runs ADD COLUMN run_key TEXT;
CREATE INDEX reconcile_runs_run_key ON reconcile_runs (run_key, id) WHERE run_key IS NOT NULL;
ALTER TABLE reconcile_runs DROP CONSTRAINT reconcile_runs_status_check;
ALTER TABLE reconcile_runs ADD CONSTRAINT reconcile_runs_status_check
    CHECK (status IN ('running', 'finished', 'failed', 'refused', 'abandoned'));
