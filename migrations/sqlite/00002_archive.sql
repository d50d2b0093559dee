-- +goose Up
CREATE TABLE metadata (
    id          INTEGER       PRIMARY KEY AUTOINCREMENT,
    tenant_id   VARCHAR(64)   NOT NULL,
    "from"      VARCHAR(255)  NOT NULL,
    fromdomain  VARCHAR(255)  NOT NULL,
    subject     TEXT          NOT NULL,
    spam        SMALLINT      NOT NULL DEFAULT 0,
    arrived     TEXT          NOT NULL,
    sent        TEXT          NULL,
    retained    TEXT          NOT NULL,
    deleted     SMALLINT      NOT NULL DEFAULT 0,
    size        BIGINT        NOT NULL,
    attachments INTEGER       NOT NULL DEFAULT 0,
    message_id  VARCHAR(512)  NOT NULL,
    in_reply_to VARCHAR(512)  NOT NULL,
    refs        TEXT          NOT NULL,
    digest      CHAR(64)      NOT NULL,
    bodydigest  CHAR(64)      NOT NULL,
    key_id      VARCHAR(16)   NOT NULL,
    CONSTRAINT metadata_digest UNIQUE (tenant_id, digest)
);
CREATE INDEX metadata_from ON metadata (tenant_id, "from");
CREATE INDEX metadata_fromdomain ON metadata (tenant_id, fromdomain);
CREATE INDEX metadata_sent ON metadata (tenant_id, sent);
CREATE INDEX metadata_arrived ON metadata (tenant_id, arrived);
CREATE INDEX metadata_retained ON metadata (retained, deleted);

CREATE TABLE rcpt (
    id       BIGINT       NOT NULL,
    "to"     VARCHAR(255) NOT NULL,
    todomain VARCHAR(255) NOT NULL,
    kind     VARCHAR(8)   NOT NULL,
    PRIMARY KEY (id, "to", kind)
);
CREATE INDEX rcpt_to ON rcpt ("to", id);
CREATE INDEX rcpt_todomain ON rcpt (todomain, id);

CREATE TABLE attachment (
    id         INTEGER      PRIMARY KEY AUTOINCREMENT,
    message_id BIGINT       NOT NULL,
    seq        INTEGER      NOT NULL,
    name       VARCHAR(512) NOT NULL,
    type       VARCHAR(255) NOT NULL,
    size       BIGINT       NOT NULL,
    digest     CHAR(64)     NOT NULL,
    CONSTRAINT attachment_seq UNIQUE (message_id, seq)
);

-- Contentless FTS5 with contentless_delete: the index keeps tokens, not the text, and a
-- message can still be removed (erasure). rowid = metadata.id.
CREATE VIRTUAL TABLE message_search USING fts5 (
    tenant_id UNINDEXED, subject, sender, recipients, body, attachments,
    content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE legal_holds (
    id          VARCHAR(40)  PRIMARY KEY,
    tenant_id   VARCHAR(64)  NOT NULL,
    type        VARCHAR(16)  NOT NULL,
    value       VARCHAR(255) NOT NULL,
    reason      TEXT         NOT NULL,
    matter      VARCHAR(255) NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    created_by  VARCHAR(255) NOT NULL,
    created_at  TEXT         NOT NULL,
    released_by VARCHAR(255) NULL,
    released_at TEXT         NULL
);
CREATE INDEX legal_holds_active ON legal_holds (tenant_id, status, type, value);

CREATE TABLE users (
    uid            INTEGER      PRIMARY KEY AUTOINCREMENT,
    username       VARCHAR(255) NOT NULL,
    realname       VARCHAR(255) NOT NULL,
    email          VARCHAR(255) NOT NULL,
    domain         VARCHAR(255) NOT NULL,
    password       VARCHAR(255) NOT NULL,
    isadmin        SMALLINT     NOT NULL DEFAULT 0,
    dn             VARCHAR(512) NOT NULL,
    samaccountname VARCHAR(255) NOT NULL,
    created_at     TEXT         NOT NULL,
    CONSTRAINT users_username UNIQUE (username)
);

-- +goose Down
DROP TABLE users;
DROP TABLE legal_holds;
DROP TABLE message_search;
DROP TABLE attachment;
DROP TABLE rcpt;
DROP TABLE metadata;
