-- +goose Up
-- An address's or a domain's messages newest first, as SQLite and PostgreSQL have them: a
-- search by from= or to= walks one of these indexes and stops after its page instead of
-- sorting every message of the address (docs/architecture.md, "Query plans").
CREATE INDEX address_role_addr_date ON address_role (addr, datekey, role);
CREATE INDEX address_role_domain_date ON address_role (domain, datekey, role);

-- +goose Down
DROP INDEX address_role_domain_date ON address_role;
DROP INDEX address_role_addr_date ON address_role;
