-- Enabled links whose code is now a path the app answers itself (/api, /dashboard, /health, /metrics): created
-- before the route existed, they can no longer be followed. Nothing is changed or deleted: their clicks
-- and stats stay readable through the API. This records them and says what to do; redirect-web also
-- logs any such link at every start, and its link API refuses these codes.
CREATE TABLE shadowed_links (
    code     TEXT        PRIMARY KEY REFERENCES links (code),
    route    TEXT        NOT NULL,
    found_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO shadowed_links (code, route)
SELECT code, '/' || code FROM links
WHERE code IN ('api', 'dashboard', 'health', 'metrics') AND disabled_at IS NULL;

DO $$
DECLARE
    shadowed RECORD;
BEGIN
    FOR shadowed IN SELECT code, route FROM shadowed_links ORDER BY code LOOP
        RAISE WARNING 'link "%" can no longer be followed: the app answers % itself. Create a link to the same URL'
            ' under another code (POST /api/links), share that one, then disable this one (DELETE /api/links/%).'
            ' Its clicks and stats stay readable.', shadowed.code, shadowed.route, shadowed.code;
    END LOOP;
END
$$;
