-- +goose Up
-- search_term loses its index by id, which held every row a second time (docs/architecture.md,
-- "Search"): a message's terms are kept in one row of search_doc, one to a line, and a
-- removal deletes its search_term rows by primary key. The rows already here are gathered
-- from search_term before the index goes.
CREATE TABLE search_doc (
    id        BIGINT      PRIMARY KEY,
    tenant_id VARCHAR(64) NOT NULL,
    terms     MEDIUMTEXT  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
SET SESSION group_concat_max_len = 16777215;
INSERT INTO search_doc (id, tenant_id, terms)
    SELECT id, MIN(tenant_id), GROUP_CONCAT(term ORDER BY term SEPARATOR '\n') FROM search_term GROUP BY id;
DROP INDEX search_term_id ON search_term;

-- +goose Down
CREATE INDEX search_term_id ON search_term (id);
DROP TABLE search_doc;
