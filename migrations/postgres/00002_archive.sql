-- +goose Up
CREATE TABLE metadata (
    id          BIGSERIAL     PRIMARY KEY,
    tenant_id   VARCHAR(64)   NOT NULL,
    "from"      VARCHAR(255)  NOT NULL,
    fromdomain  VARCHAR(255)  NOT NULL,
    subject     TEXT          NOT NULL,
    spam        SMALLINT      NOT NULL DEFAULT 0,
    arrived     TIMESTAMPTZ   NOT NULL,
    sent        TIMESTAMPTZ   NULL,
    retained    TIMESTAMPTZ   NOT NULL,
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
    id         BIGSERIAL    PRIMARY KEY,
    message_id BIGINT       NOT NULL,
    seq        INTEGER      NOT NULL,
    name       VARCHAR(512) NOT NULL,
    type       VARCHAR(255) NOT NULL,
    size       BIGINT       NOT NULL,
    digest     CHAR(64)     NOT NULL,
    CONSTRAINT attachment_seq UNIQUE (message_id, seq)
);

CREATE TABLE message_search (
    id        BIGINT      PRIMARY KEY,
    tenant_id VARCHAR(64) NOT NULL,
    document  TSVECTOR    NOT NULL
);
CREATE INDEX message_search_document ON message_search USING GIN (document);

CREATE TABLE legal_holds (
    id          VARCHAR(40)  PRIMARY KEY,
    tenant_id   VARCHAR(64)  NOT NULL,
    type        VARCHAR(16)  NOT NULL,
    value       VARCHAR(255) NOT NULL,
    reason      TEXT         NOT NULL,
    matter      VARCHAR(255) NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    created_by  VARCHAR(255) NOT NULL,
    created_at  TIMESTAMPTZ  NOT NULL,
    released_by VARCHAR(255) NULL,
    released_at TIMESTAMPTZ  NULL
);
CREATE INDEX legal_holds_active ON legal_holds (tenant_id, status, type, value);

CREATE TABLE users (
    uid            BIGSERIAL    PRIMARY KEY,
    username       VARCHAR(255) NOT NULL,
    realname       VARCHAR(255) NOT NULL,
    email          VARCHAR(255) NOT NULL,
    domain         VARCHAR(255) NOT NULL,
    password       VARCHAR(255) NOT NULL,
    isadmin        SMALLINT     NOT NULL DEFAULT 0,
    dn             VARCHAR(512) NOT NULL,
    samaccountname VARCHAR(255) NOT NULL,
    created_at     TIMESTAMPTZ  NOT NULL,
    CONSTRAINT users_username UNIQUE (username)
);

-- +goose Down
DROP TABLE users;
DROP TABLE legal_holds;
DROP TABLE message_search;
DROP TABLE attachment;
DROP TABLE rcpt;
DROP TABLE metadata;
