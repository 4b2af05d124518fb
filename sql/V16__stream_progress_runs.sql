-- A click job started without state recounts from the start of the open day, so its event time moves
-- back: every minute since then is open again until the recount passes it. Each such start is a new run;
-- a newer run's progress replaces an older run's whether lower or not, so that reconcile leaves alone the
-- minutes the stream is still recounting. A job restored from a checkpoint or savepoint goes on as its run.
ALTER TABLE stream_progress ADD COLUMN run_started_at TIMESTAMPTZ NOT NULL DEFAULT 'epoch';
