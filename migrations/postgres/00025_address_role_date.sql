-- +goose Up
-- An address's or a domain's messages newest first, as SQLite has them since its date-key
-- migration: a search by from= or to= walks one of these indexes and stops after its page
-- instead of sorting every message of the address (docs/architecture.md, "Query plans";
-- measured at 1,000,000 messages in docs/performance.md).
CREATE INDEX address_role_addr_date ON address_role (addr, datekey, role);
CREATE INDEX address_role_domain_date ON address_role (domain, datekey, role);

-- +goose Down
DROP INDEX address_role_domain_date;
DROP INDEX address_role_addr_date;
