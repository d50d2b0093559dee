-- +goose Up
-- The date walk's index also carries the id, so that a day block's page is sorted from
-- this index alone (the block's hits joined to it by id) and only the page's rows are read
-- from the table: a common word's page at offset 5,000 read its block's 3,851 hits' whole
-- rows, 31 ms, and now 18 ms at a million messages (docs/performance.md, "PostgreSQL: a
-- block's page sorted by id and date key"). The index keeps its name; building it reads
-- every message's row once (about 2 seconds for a million on the benchmark machine), and
-- writes to metadata wait meanwhile.
DROP INDEX metadata_tenant_datekey_visible;
CREATE INDEX metadata_tenant_datekey_visible ON metadata (tenant_id, datekey) INCLUDE (deleted, erased_by, msgdate, id);

-- +goose Down
DROP INDEX metadata_tenant_datekey_visible;
CREATE INDEX metadata_tenant_datekey_visible ON metadata (tenant_id, datekey) INCLUDE (deleted, erased_by, msgdate);
