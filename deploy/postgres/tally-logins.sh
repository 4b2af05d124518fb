#!/bin/sh
# Makes one login per deployable, each with the least-privilege role its deployable needs (the roles and
# their grants come from the migrations, V14; made here first so that the logins can join them before the
# schema exists). The postgres image runs this once, when it initialises an empty data volume; on an
# existing volume run it by hand: docker compose exec postgres sh /docker-entrypoint-initdb.d/10-tally-logins.sh
set -eu
: "${TALLY_WEB_DB_PASSWORD:?}" "${TALLY_JOB_DB_PASSWORD:?}" "${TALLY_RECONCILE_DB_PASSWORD:?}"
psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  -v web="$TALLY_WEB_DB_PASSWORD" -v job="$TALLY_JOB_DB_PASSWORD" -v reconcile="$TALLY_RECONCILE_DB_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I NOLOGIN', r) FROM unnest(ARRAY['tally_redirect_web', 'tally_click_job', 'tally_reconcile']) r
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) \gexec
SELECT format('CREATE ROLE %I LOGIN IN ROLE %I', l, r)
  FROM (VALUES ('tally_web', 'tally_redirect_web'), ('tally_job', 'tally_click_job'),
               ('tally_reconcile_login', 'tally_reconcile')) AS x(l, r)
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = l) \gexec
ALTER ROLE tally_web PASSWORD :'web';
ALTER ROLE tally_job PASSWORD :'job';
ALTER ROLE tally_reconcile_login PASSWORD :'reconcile';
SQL
