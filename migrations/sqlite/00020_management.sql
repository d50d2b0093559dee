-- +goose Up
-- The management API's tables (docs/api.md, "Management"): domains, customers (the
-- tenants under MULTITENANCY=1), groups and header checks. Each write is also a ledger
-- event (management.*); these rows are the current state, written in the same
-- transaction as the event.
CREATE TABLE domains (
    domain     VARCHAR(255) NOT NULL PRIMARY KEY,
    mapped     VARCHAR(255) NOT NULL,
    ldap_id    VARCHAR(64)  NOT NULL
);

CREATE TABLE customers (
    id INTEGER      PRIMARY KEY AUTOINCREMENT,
    customer_id       VARCHAR(64)  NOT NULL,
    customer_address  VARCHAR(255) NULL,
    gui_url           VARCHAR(255) NULL,
    domain            VARCHAR(255) NOT NULL,
    worker            VARCHAR(255) NULL,
    quota             BIGINT       NULL,
    retention_days    INTEGER      NULL,
    branding_url      VARCHAR(512) NULL,
    branding_logo     VARCHAR(512) NULL,
    support_link      VARCHAR(512) NULL,
    background_colour VARCHAR(7)   NULL,
    text_colour       VARCHAR(7)   NULL,
    enable_purge      SMALLINT     NOT NULL DEFAULT 0,
    enabled           SMALLINT     NOT NULL DEFAULT 1,
    created           BIGINT       NOT NULL,
    CONSTRAINT customers_customer_id UNIQUE (customer_id),
    CONSTRAINT customers_domain UNIQUE (domain)
);

-- email and assigned_email are sets of addresses: lower-cased, sorted, one a line.
CREATE TABLE user_groups (
    id INTEGER      PRIMARY KEY AUTOINCREMENT,
    tenant_id      VARCHAR(64)  NOT NULL,
    groupname      VARCHAR(255) NOT NULL,
    email          TEXT         NOT NULL,
    assigned_email TEXT         NOT NULL,
    CONSTRAINT user_groups_name UNIQUE (tenant_id, groupname)
);

CREATE TABLE header_checks (
    id INTEGER      PRIMARY KEY AUTOINCREMENT,
    tenant_id VARCHAR(64)   NOT NULL,
    pattern   VARCHAR(1024) NOT NULL,
    tag       VARCHAR(255)  NOT NULL
);
CREATE INDEX header_checks_tenant ON header_checks (tenant_id, id);

ALTER TABLE users ADD COLUMN groupname VARCHAR(255) NOT NULL DEFAULT '';
CREATE INDEX users_domain ON users (domain);

-- +goose Down
DROP INDEX users_domain;
ALTER TABLE users DROP COLUMN groupname;
DROP TABLE header_checks;
DROP TABLE user_groups;
DROP TABLE customers;
DROP TABLE domains;
