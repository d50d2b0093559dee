-- +goose Up
-- Retention rules (docs/operations.md, "Retention rules"): how many days the mail of an
-- address (as sender or as recipient) or of a domain is kept, per tenant. The most
-- specific rule that matches a message sets its retention when it is archived. Each
-- change is also a ledger event (retention.rule_added, retention.rule_deleted).
CREATE TABLE retention_rules (
    id         VARCHAR(40)  NOT NULL PRIMARY KEY,
    tenant_id  VARCHAR(64)  NOT NULL,
    kind       VARCHAR(16)  NOT NULL,
    value      VARCHAR(255) NOT NULL,
    days       INTEGER      NOT NULL,
    created_by VARCHAR(255) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    CONSTRAINT retention_rules_rule UNIQUE (tenant_id, kind, value)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE retention_rules;
