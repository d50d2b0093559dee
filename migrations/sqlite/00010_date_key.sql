-- +goose Up
-- The date key (docs/architecture.md, "Search"): one integer that orders messages newest
-- first by their date (msgdate to the second, clamped to 1900..2172) and then by id, the
-- order of every search page. datekey = seconds since 1900 << 30 | (id & 2^30-1), computed
-- by archive.DateKey; this statement is its SQL form for the rows already here.
ALTER TABLE metadata ADD COLUMN datekey BIGINT NULL;
UPDATE metadata SET datekey =
    (MIN(MAX(CAST(strftime('%s', msgdate) AS INTEGER) + 2208988800, 0), 8589934591) << 30) | (id & 1073741823);
-- The date walk of a tenant's messages, newest first.
CREATE INDEX metadata_tenant_datekey ON metadata (tenant_id, datekey);
DROP INDEX metadata_msgdate;

-- address_role carries its message's date key (rewritten with it by reindex), so that the
-- messages of an address or a domain in a role come newest first from an index: a page of
-- a heavy sender's mail is the end of its range, not a sort of all of it. The role comes
-- after the date key: a participant (either role) is then one range in order too.
ALTER TABLE address_role ADD COLUMN datekey BIGINT NULL;
UPDATE address_role SET datekey = (SELECT m.datekey FROM metadata m WHERE m.id = address_role.id);
CREATE INDEX address_role_addr_date ON address_role (addr, datekey, role);
CREATE INDEX address_role_domain_date ON address_role (domain, datekey, role);

-- +goose Down
DROP INDEX address_role_domain_date;
DROP INDEX address_role_addr_date;
ALTER TABLE address_role DROP COLUMN datekey;

CREATE INDEX metadata_msgdate ON metadata (tenant_id, msgdate);
DROP INDEX metadata_tenant_datekey;
ALTER TABLE metadata DROP COLUMN datekey;
