-- One role per deployable, each allowed what that deployable does and nothing more: none owns a table,
-- none can change the schema, and redirect-web, the one that faces the internet, cannot write a count.
-- They cannot log in: a deployment makes a login user per deployable and grants it the role, e.g.
--   CREATE ROLE tally_web LOGIN PASSWORD '...' IN ROLE tally_redirect_web;
-- The migrations run as the schema's owner, which needs CREATEROLE the first time (or the roles made
-- beforehand). A migration that adds a table grants it here-like to the roles that use it.
DO $$
DECLARE
    role TEXT;
BEGIN
    FOREACH role IN ARRAY ARRAY['tally_redirect_web', 'tally_click_job', 'tally_reconcile'] LOOP
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = role) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', role);
        END IF;
    END LOOP;
END
$$;

-- PostgreSQL 15's default on older servers too: only the owner creates objects in the schema.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO tally_redirect_web, tally_click_job, tally_reconcile;

-- redirect-web: links, the day salts of visitor hashes, reading every count, and retention's deletes.
GRANT SELECT, INSERT, UPDATE ON links TO tally_redirect_web;
GRANT SELECT, INSERT, DELETE ON visitor_salts TO tally_redirect_web;
GRANT SELECT ON click_counts, click_hourly, click_daily, click_dimensions_hourly, click_dimensions_daily,
    stream_progress TO tally_redirect_web;
GRANT DELETE ON click_counts, click_hourly, click_dimensions_hourly TO tally_redirect_web;

-- The click job: upserts of every count table and of its progress.
GRANT SELECT, INSERT, UPDATE ON click_counts, click_hourly, click_daily, click_dimensions_hourly,
    click_dimensions_daily, stream_progress TO tally_click_job;

-- Reconcile: its staging tables and ledger, reading the progress, and repairing every count table.
GRANT SELECT, INSERT, UPDATE, DELETE ON click_counts, click_hourly, click_daily, click_dimensions_hourly,
    click_dimensions_daily TO tally_reconcile;
GRANT SELECT, INSERT, UPDATE, DELETE ON reconcile_recount, reconcile_recount_hourly, reconcile_recount_daily,
    reconcile_recount_dimensions, reconcile_recount_dimensions_daily, reconcile_runs, reconcile_drift
    TO tally_reconcile;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tally_reconcile;
GRANT SELECT ON stream_progress, links TO tally_reconcile;
