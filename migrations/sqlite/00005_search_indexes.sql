-- +goose Up
-- Indexes for archive search (docs/performance.md, "Search latency"). SQLite plans
-- without statistics (nothing runs ANALYZE), so each index must be the obvious choice:
--  * a date range filters on COALESCE(sent, arrived): without an index on that expression
--    every date-range search walked the whole tenant (0.4 s at 100,000 messages);
--  * a sender search ordered by arrival walked metadata_arrived until it had a page,
--    instead of reading the sender's rows: (tenant_id, "from", arrived) gives them in
--    page order and replaces metadata_from, its prefix.
CREATE INDEX metadata_dated ON metadata (tenant_id, COALESCE(sent, arrived));
CREATE INDEX metadata_from_arrived ON metadata (tenant_id, "from", arrived);
DROP INDEX metadata_from;

-- +goose Down
CREATE INDEX metadata_from ON metadata (tenant_id, "from");
DROP INDEX metadata_from_arrived;
DROP INDEX metadata_dated;
