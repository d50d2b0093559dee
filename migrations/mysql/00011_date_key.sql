-- +goose Up
-- The date key (docs/architecture.md, "Search"): one integer that orders messages newest
-- first by their date (msgdate to the second, clamped to 1900..2172) and then by id, the
-- order of every search page on every database. datekey = seconds since 1900 << 30 |
-- (id & 2^30-1), computed by archive.DateKey; this statement is its SQL form for the rows
-- already here (TIMESTAMPDIFF, not UNIX_TIMESTAMP: msgdate is UTC whatever the session's
-- time zone).
ALTER TABLE metadata ADD COLUMN datekey BIGINT NULL;
UPDATE metadata SET datekey =
    (LEAST(GREATEST(TIMESTAMPDIFF(SECOND, '1900-01-01 00:00:00', msgdate), 0), 8589934591) << 30) | (id & 1073741823);
CREATE INDEX metadata_tenant_datekey ON metadata (tenant_id, datekey);
DROP INDEX metadata_msgdate ON metadata;

-- address_role carries its message's date key, rewritten with it by reindex: SQLite walks
-- an address's messages in its order, and the rows are written alike on every database.
ALTER TABLE address_role ADD COLUMN datekey BIGINT NULL;
UPDATE address_role SET datekey = (SELECT m.datekey FROM metadata m WHERE m.id = address_role.id);

-- +goose Down
ALTER TABLE address_role DROP COLUMN datekey;

CREATE INDEX metadata_msgdate ON metadata (tenant_id, msgdate);
DROP INDEX metadata_tenant_datekey ON metadata;
ALTER TABLE metadata DROP COLUMN datekey;
