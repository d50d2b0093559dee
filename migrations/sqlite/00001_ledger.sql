-- +goose Up
CREATE TABLE events (
    position       BIGINT       PRIMARY KEY,
    stream_id      VARCHAR(128) NOT NULL,
    stream_type    VARCHAR(64)  NOT NULL,
    stream_version BIGINT       NOT NULL,
    tenant_id      VARCHAR(64)  NOT NULL,
    event_type     VARCHAR(128) NOT NULL,
    schema_version INTEGER      NOT NULL,
    payload        TEXT         NOT NULL,
    metadata       TEXT         NOT NULL,
    recorded_at    TEXT         NOT NULL,
    leaf_hash      CHAR(64)     NOT NULL,
    chain_hash     CHAR(64)     NOT NULL,
    CONSTRAINT events_stream_version UNIQUE (stream_id, stream_version)
);
CREATE INDEX events_tenant ON events (tenant_id, position);

CREATE TABLE ledger_head (
    id           INTEGER     PRIMARY KEY,
    size         BIGINT      NOT NULL,
    chain_hash   CHAR(64)    NOT NULL,
    merkle_state TEXT        NOT NULL,
    updated_at   TEXT        NOT NULL
);
INSERT INTO ledger_head (id, size, chain_hash, merkle_state, updated_at)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000', '', strftime('%Y-%m-%dT%H:%M:%fZ','now'));

CREATE TABLE merkle_nodes (
    level INTEGER  NOT NULL,
    idx   BIGINT   NOT NULL,
    hash  CHAR(64) NOT NULL,
    PRIMARY KEY (level, idx)
);

CREATE TABLE checkpoints (
    size       BIGINT      PRIMARY KEY,
    root_hash  CHAR(64)    NOT NULL,
    note       TEXT        NOT NULL,
    created_at TEXT        NOT NULL
);

CREATE TABLE consumer_offsets (
    consumer   VARCHAR(128) PRIMARY KEY,
    position   BIGINT       NOT NULL,
    updated_at TEXT         NOT NULL
);

CREATE TABLE consumer_poison (
    id         INTEGER      PRIMARY KEY AUTOINCREMENT,
    consumer   VARCHAR(128) NOT NULL,
    position   BIGINT       NOT NULL,
    error      TEXT         NOT NULL,
    created_at TEXT         NOT NULL
);

CREATE TABLE ledger_streams (
    stream_id   VARCHAR(128) PRIMARY KEY,
    stream_type VARCHAR(64)  NOT NULL,
    tenant_id   VARCHAR(64)  NOT NULL,
    version     BIGINT       NOT NULL,
    first_position BIGINT    NOT NULL,
    last_position  BIGINT    NOT NULL,
    last_event_type VARCHAR(128) NOT NULL,
    created_at  TEXT         NOT NULL,
    updated_at  TEXT         NOT NULL
);
CREATE INDEX ledger_streams_tenant ON ledger_streams (tenant_id, stream_type);

-- +goose Down
DROP TABLE ledger_streams;
DROP TABLE consumer_poison;
DROP TABLE consumer_offsets;
DROP TABLE checkpoints;
DROP TABLE merkle_nodes;
DROP TABLE ledger_head;
DROP TABLE events;
