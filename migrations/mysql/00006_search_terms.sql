-- +goose Up
-- The full-text index of MySQL/MariaDB becomes an inverted index that the B-tree serves
-- (archive/search.go, mysqlIndex): one row per distinct term of a message, so that a word
-- is a range of the primary key and a message's terms one lookup each. InnoDB FULLTEXT took
-- about a second to match a word that most messages hold. The binary collation compares
-- terms exactly (the archive lower-cases them). An archive filled before this migration
-- has no search index any more and must be re-imported (docs/operations.md).
CREATE TABLE search_term (
    tenant_id VARCHAR(64) NOT NULL,
    term      VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    id        BIGINT      NOT NULL,
    PRIMARY KEY (tenant_id, term, id),
    KEY search_term_id (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
DROP TABLE message_search;

-- +goose Down
CREATE TABLE message_search (
    id        BIGINT      PRIMARY KEY,
    tenant_id VARCHAR(64) NOT NULL,
    document  MEDIUMTEXT  NOT NULL,
    FULLTEXT KEY message_search_document (document)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
DROP TABLE search_term;
