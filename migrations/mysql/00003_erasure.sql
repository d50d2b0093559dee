-- +goose Up
CREATE TABLE gdpr_requests (
    id                   BIGINT       AUTO_INCREMENT PRIMARY KEY,
    request_id           VARCHAR(50)  NOT NULL,
    tenant_id            VARCHAR(64)  NOT NULL,
    email_addresses      JSON         NOT NULL,
    requester_name       VARCHAR(255) NULL,
    status               VARCHAR(20)  NOT NULL,
    emails_as_sender     INTEGER      NOT NULL DEFAULT 0,
    emails_as_recipient  INTEGER      NOT NULL DEFAULT 0,
    attachments_count    INTEGER      NOT NULL DEFAULT 0,
    blocked_by_legal_hold BOOLEAN     NOT NULL DEFAULT FALSE,
    legal_hold_ids       JSON         NOT NULL,
    blocked_reason       TEXT         NULL,
    created_by           VARCHAR(255) NOT NULL,
    created_at           DATETIME(6)  NOT NULL,
    approved_by          VARCHAR(255) NULL,
    approved_at          DATETIME(6)  NULL,
    rejection_reason     TEXT         NULL,
    executed_at          DATETIME(6)  NULL,
    deleted_count        INTEGER      NOT NULL DEFAULT 0,
    redacted_count       INTEGER      NOT NULL DEFAULT 0,
    certificate_hash     VARCHAR(64)  NULL,
    completion_position  BIGINT       NULL,
    CONSTRAINT gdpr_requests_request_id UNIQUE (request_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX gdpr_requests_tenant_status ON gdpr_requests (tenant_id, status, created_at);

CREATE TABLE gdpr_request_audit (
    id           BIGINT       AUTO_INCREMENT PRIMARY KEY,
    request_id   VARCHAR(50)  NOT NULL,
    action       VARCHAR(50)  NOT NULL,
    performed_by VARCHAR(255) NOT NULL,
    performed_at DATETIME(6)  NOT NULL,
    details      JSON         NOT NULL,
    ip_address   VARCHAR(45)  NULL,
    position     BIGINT       NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX gdpr_request_audit_request ON gdpr_request_audit (request_id, id);

CREATE TABLE gdpr_request_sequence (
    year_prefix   VARCHAR(4) PRIMARY KEY,
    last_sequence INTEGER    NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE metadata ADD COLUMN erased_by VARCHAR(50) NULL;
CREATE INDEX metadata_erased_by ON metadata (erased_by);

-- +goose Down
DROP INDEX metadata_erased_by ON metadata;
ALTER TABLE metadata DROP COLUMN erased_by;
DROP TABLE gdpr_request_sequence;
DROP TABLE gdpr_request_audit;
DROP TABLE gdpr_requests;
