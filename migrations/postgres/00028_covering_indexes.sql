-- +goose Up
-- Searches count up to 10,001 matching messages, each tested for its tenant and
-- visibility, and from= and to= walk an address's or a domain's rows newest first. With
-- these indexes PostgreSQL answers both from the indexes alone (index-only scans) instead
-- of reading a table row for each message: at 1,000,000 messages a to=@domain count of
-- 10,001 took 116 ms reading address_role's and metadata's rows, 41 to 71 ms from the
-- indexes (docs/performance.md, "PostgreSQL: index-only counts").
-- The domain walk is by role first: every search by domain asks for one role.
DROP INDEX address_role_domain_date;
CREATE INDEX address_role_domain_date ON address_role (domain, role, datekey) INCLUDE (id, addr);
DROP INDEX address_role_addr_date;
CREATE INDEX address_role_addr_date ON address_role (addr, datekey, role) INCLUDE (id);
-- What every count tests of a message: its tenant, visibility, date and attachments.
CREATE INDEX metadata_visible ON metadata (id) INCLUDE (tenant_id, deleted, erased_by, datekey, msgdate, attachments);

-- +goose Down
DROP INDEX metadata_visible;
DROP INDEX address_role_addr_date;
CREATE INDEX address_role_addr_date ON address_role (addr, datekey, role);
DROP INDEX address_role_domain_date;
CREATE INDEX address_role_domain_date ON address_role (domain, datekey, role);
