-- +goose Up
-- Search by date (docs/performance.md, "Search latency"). A message's date is its Date
-- header, else its arrival: msgdate holds it, so that date filters and the newest-first
-- order of search results use one plain index on every dialect (MariaDB cannot index the
-- expression COALESCE(sent, arrived)). (tenant_id, "from", msgdate) gives a sender's mail
-- in page order and replaces metadata_from, its prefix.
ALTER TABLE metadata ADD COLUMN msgdate TEXT NULL;
UPDATE metadata SET msgdate = COALESCE(sent, arrived);
CREATE INDEX metadata_msgdate ON metadata (tenant_id, msgdate);
CREATE INDEX metadata_from_date ON metadata (tenant_id, "from", msgdate);
DROP INDEX metadata_from;

-- +goose Down
CREATE INDEX metadata_from ON metadata (tenant_id, "from");
DROP INDEX metadata_from_date;
DROP INDEX metadata_msgdate;
ALTER TABLE metadata DROP COLUMN msgdate;
