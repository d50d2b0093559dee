-- +goose Up
-- eDiscovery exports: projections of the export_job streams (projections/export.go). Ids
-- come from ledger positions, so a rebuild gives the same rows.
CREATE TABLE ediscovery_exports (
    id            BIGINT       PRIMARY KEY,
    job_id        VARCHAR(64)  NOT NULL,
    tenant_id     VARCHAR(64)  NOT NULL,
    status        VARCHAR(32)  NOT NULL,
    bates_prefix  VARCHAR(32)  NOT NULL,
    bates_start   BIGINT       NOT NULL,
    bates_end     BIGINT       NULL,
    total_emails  INTEGER      NOT NULL,
    processed     INTEGER      NOT NULL DEFAULT 0,
    failed        INTEGER      NOT NULL DEFAULT 0,
    config_json   LONGTEXT     NOT NULL,
    output_path   VARCHAR(512) NOT NULL,
    output_size   BIGINT       NULL,
    error_message TEXT         NULL,
    created_by    VARCHAR(255) NOT NULL,
    created_at    DATETIME(6)  NOT NULL,
    started_at    DATETIME(6)  NULL,
    completed_at  DATETIME(6)  NULL,
    manifest_hash CHAR(64)     NULL,
    CONSTRAINT ediscovery_exports_job_id UNIQUE (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ediscovery_exports_tenant ON ediscovery_exports (tenant_id, created_at);
CREATE INDEX ediscovery_exports_status ON ediscovery_exports (status, id);

CREATE TABLE ediscovery_export_items (
    id            BIGINT       PRIMARY KEY,
    job_id        VARCHAR(64)  NOT NULL,
    email_id      BIGINT       NOT NULL,
    bates_number  VARCHAR(64)  NULL,
    status        VARCHAR(32)  NOT NULL,
    error_message TEXT         NULL,
    processed_at  DATETIME(6)  NOT NULL,
    CONSTRAINT ediscovery_export_items_email UNIQUE (job_id, email_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE ediscovery_download_log (
    id            BIGINT       PRIMARY KEY,
    job_id        VARCHAR(64)  NOT NULL,
    tenant_id     VARCHAR(64)  NOT NULL,
    downloaded_by VARCHAR(255) NOT NULL,
    downloaded_at DATETIME(6)  NOT NULL,
    ip_address    VARCHAR(45)  NULL,
    user_agent    TEXT         NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ediscovery_download_log_job ON ediscovery_download_log (job_id, id);

CREATE TABLE ediscovery_bates_sequences (
    id          BIGINT      PRIMARY KEY,
    prefix      VARCHAR(32) NOT NULL,
    last_number BIGINT      NOT NULL,
    updated_at  DATETIME(6) NOT NULL,
    CONSTRAINT ediscovery_bates_sequences_prefix UNIQUE (prefix)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every range of Bates numbers ever reserved, kept when its job is deleted: the overlap
-- check of an explicit bates_start_number reads it under the ledger-head lock.
CREATE TABLE ediscovery_bates_ranges (
    id          BIGINT      PRIMARY KEY,
    prefix      VARCHAR(32) NOT NULL,
    range_start BIGINT      NOT NULL,
    range_end   BIGINT      NOT NULL,
    job_id      VARCHAR(64) NOT NULL,
    tenant_id   VARCHAR(64) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ediscovery_bates_ranges_prefix ON ediscovery_bates_ranges (prefix, range_start);
CREATE INDEX ediscovery_bates_ranges_tenant ON ediscovery_bates_ranges (tenant_id, prefix);

-- One row per running export (the admission of a job inserts it, its end deletes it).
CREATE TABLE ediscovery_active_exports (
    id         BIGINT      PRIMARY KEY,
    tenant_id  VARCHAR(64) NOT NULL,
    job_id     VARCHAR(64) NOT NULL,
    started_at DATETIME(6) NOT NULL,
    CONSTRAINT ediscovery_active_exports_job UNIQUE (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE ediscovery_active_exports;
DROP TABLE ediscovery_bates_ranges;
DROP TABLE ediscovery_bates_sequences;
DROP TABLE ediscovery_download_log;
DROP TABLE ediscovery_export_items;
DROP TABLE ediscovery_exports;
