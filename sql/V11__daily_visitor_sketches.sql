-- Unique visitors over any range of days (ADR-008): each day's row also holds a CPC sketch (Apache
-- DataSketches, lgK 14) of its visitors' keys across days, and the stats API unions the sketches of a
-- range's days. Written with the day's totals by the same upsert, and recounted by reconcile like them.
-- NULL for a day without a visitor key: every day before this migration, and days without visitors.
ALTER TABLE click_daily ADD COLUMN visitor_sketch BYTEA;
ALTER TABLE reconcile_recount_daily ADD COLUMN visitor_sketch BYTEA;
