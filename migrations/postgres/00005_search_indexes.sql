-- +goose Up
-- Index for archive search (docs/performance.md, "Search latency"): a date range filters
-- on COALESCE(sent, arrived), which no index covered, so counting the matches of a
-- date-range search read the whole tenant.
CREATE INDEX metadata_dated ON metadata (tenant_id, (COALESCE(sent, arrived)));

-- +goose Down
DROP INDEX metadata_dated;
