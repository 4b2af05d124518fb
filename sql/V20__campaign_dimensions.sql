-- A click's campaign tags (utm_source, utm_medium, utm_campaign; event version 3) are breakdown dimensions
-- of the clicks that came with any. The dimension checks of the read side and of reconcile's staging
-- tables take them. The new checks are added NOT VALID: they allow more than the ones they replace, which
-- every stored row met, so checking each row again (under a lock that stops the job's writes) would find
-- nothing; rows written from now on are checked.
DO $$
DECLARE
    t TEXT;
    c RECORD;
BEGIN
    FOREACH t IN ARRAY ARRAY['click_dimensions_hourly', 'click_dimensions_daily', 'reconcile_recount_dimensions',
                             'reconcile_recount_dimensions_daily'] LOOP
        FOR c IN
            SELECT conname FROM pg_constraint
            WHERE contype = 'c' AND conrelid = t::regclass AND pg_get_constraintdef(oid) LIKE '%bot_kind%'
        LOOP
            EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', t, c.conname);
        END LOOP;
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (dimension IN (''country'', ''referrer'','
                       ' ''browser'', ''os'', ''device'', ''bot_kind'', ''utm_source'', ''utm_medium'','
                       ' ''utm_campaign'')) NOT VALID', t, t || '_dimension_check');
    END LOOP;
END
$$;
