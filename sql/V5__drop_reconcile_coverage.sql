-- Click records no longer carry the link code as key, so a link's clicks may sit in any partition and
-- reconciliation covers every link from one instant, the latest start of any partition's log
-- (docs/adr/ADR-005-click-topic-key.md). The per-link coverage rows V4 staged are not needed any more.
DROP TABLE reconcile_coverage;
