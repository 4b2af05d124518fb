-- Reconcile repairs the read side from its staging tables with one statement per table, which must not
-- meet a row the read side refuses: the staging tables take the read side's checks, so that such a row
-- is refused where reconcile stages it (and set aside there, row by row, as the stream does) instead of
-- failing the repair. A migration that adds a check to a read-side table adds it to its staging table.
ALTER TABLE reconcile_recount
    ADD CHECK (clicks >= 0),
    ADD CHECK (bot_clicks >= 0),
    ADD CHECK (minute = date_trunc('minute', minute));
ALTER TABLE reconcile_recount_hourly
    ADD CHECK (clicks >= 0),
    ADD CHECK (bot_clicks >= 0),
    ADD CHECK (visitors >= 0),
    ADD CHECK (extract(epoch FROM hour) :: BIGINT % 3600 = 0);
ALTER TABLE reconcile_recount_daily
    ADD CHECK (clicks >= 0),
    ADD CHECK (bot_clicks >= 0),
    ADD CHECK (visitors >= 0);
ALTER TABLE reconcile_recount_dimensions
    ADD CHECK (dimension IN ('country', 'referrer', 'browser', 'os', 'device', 'bot_kind')),
    ADD CHECK (clicks >= 0),
    ADD CHECK (extract(epoch FROM hour) :: BIGINT % 3600 = 0);
ALTER TABLE reconcile_recount_dimensions_daily
    ADD CHECK (dimension IN ('country', 'referrer', 'browser', 'os', 'device', 'bot_kind')),
    ADD CHECK (clicks >= 0);
