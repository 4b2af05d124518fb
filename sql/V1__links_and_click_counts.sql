-- Links that redirect-web serves.
CREATE TABLE links (
    code        TEXT        PRIMARY KEY,
    url         TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    disabled_at TIMESTAMPTZ,
    -- Only the naive `sync` counting mode writes this column; it exists so the benchmark can measure
    -- what an inline `clicks = clicks + 1` costs. The counts users read live in click_counts.
    clicks      BIGINT      NOT NULL DEFAULT 0
);

-- Clicks per link and per event-time minute, written by the streaming job and repaired by reconcile.
-- Every writer upserts whole totals for a (code, minute), never increments, so a replayed write is a no-op.
-- There is deliberately no foreign key to links: counts are derived from the click log, which may
-- hold clicks for a link deleted since, and the streaming job must never fail on such a row.
CREATE TABLE click_counts (
    code        TEXT        NOT NULL,
    minute      TIMESTAMPTZ NOT NULL,
    clicks      BIGINT      NOT NULL CHECK (clicks >= 0),
    bot_clicks  BIGINT      NOT NULL DEFAULT 0 CHECK (bot_clicks >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (code, minute),
    CHECK (minute = date_trunc('minute', minute))
);

-- Reconciliation scans a time range across all codes.
CREATE INDEX click_counts_minute_idx ON click_counts (minute);
