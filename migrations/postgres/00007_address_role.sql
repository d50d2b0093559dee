-- +goose Up
-- The address roles of each message (docs/address-rule.md): one row per distinct (role,
-- key), role 1 sender, 2 recipient; addr is the match key (analyzer.Normalize), domain its
-- domain (analyzer.DomainOf). The erasure scope, legal holds and purge read it.
CREATE TABLE address_role (
    id     BIGINT       NOT NULL,
    role   SMALLINT     NOT NULL,
    addr   VARCHAR(512) NOT NULL,
    domain VARCHAR(512) NOT NULL,
    PRIMARY KEY (id, role, addr)
);
CREATE INDEX address_role_addr ON address_role (addr, id, role);
CREATE INDEX address_role_domain ON address_role (domain, id);

-- Messages archived before: the roles the old columns knew (From, else Sender; To, Cc,
-- Bcc, envelope), lower-cased but not IDNA-mapped. `mailledger reindex` replaces them with
-- the whole rule (docs/operations.md, "Upgrading to address roles").
INSERT INTO address_role (id, role, addr, domain)
    SELECT id, 1, "from", fromdomain FROM metadata WHERE "from" <> '';
INSERT INTO address_role (id, role, addr, domain)
    SELECT DISTINCT id, 2, "to", todomain FROM rcpt WHERE "to" <> '';

-- +goose Down
DROP TABLE address_role;
