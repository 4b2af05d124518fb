-- The links list's search (code or URL containing a text, in any case) is a leading-wildcard ILIKE,
-- which no B-tree serves: trigram indexes let PostgreSQL find the matches without reading every link.
-- pg_trgm ships with PostgreSQL's contrib modules and is a trusted extension (PostgreSQL 13+): the
-- database's owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX links_code_trgm ON links USING gin (code gin_trgm_ops);
CREATE INDEX links_url_trgm ON links USING gin (url gin_trgm_ops);
