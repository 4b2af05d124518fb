-- Tags group a user's links (a campaign, a team, a channel); an expiry ends a link's redirects at a
-- time set in advance, answered 410 like a disabled link but counted apart from it. Both are bounded
-- here as the API bounds them, so that a row written by hand cannot hold what the API would refuse.
ALTER TABLE links
    ADD COLUMN tags       TEXT[]      NOT NULL DEFAULT '{}',
    ADD COLUMN expires_at TIMESTAMPTZ;

CREATE FUNCTION link_tags_bounded(tags TEXT[]) RETURNS BOOLEAN
    LANGUAGE sql IMMUTABLE STRICT AS
$$
SELECT cardinality(tags) <= 10
    AND array_position(tags, NULL) IS NULL
    AND coalesce(bool_and(tag ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'), TRUE)
FROM unnest(tags) AS tag
$$;

ALTER TABLE links ADD CONSTRAINT links_tags_bounded CHECK (link_tags_bounded(tags));

-- Totals per tag read the links of a tag.
CREATE INDEX links_tags_idx ON links USING gin (tags);

-- A replica must learn of a changed expiry as of a changed target.
DROP TRIGGER links_notify_change ON links;
CREATE TRIGGER links_notify_change
    AFTER INSERT OR UPDATE OF code, url, disabled_at, expires_at OR DELETE ON links
    FOR EACH ROW EXECUTE FUNCTION notify_link_change();
