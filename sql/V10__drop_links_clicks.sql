-- Clicks are counted from the click log into click_counts and the aggregates, never on the link's row:
-- links.clicks was written only by an inline counter that the redirect benchmark compares against, and
-- that benchmark now adds the column to its own database. Nothing reads it.
ALTER TABLE links DROP COLUMN clicks;
