-- +goose Up
-- search_term is keyed by (tenant, term, date key, id) (archive/search_mysql.go, mysqlIndex):
-- a word's rows are its messages newest first, as every page is ordered, so a page is the
-- first rows of the word's range, a date window a part of it, and another word a lookup
-- of the message's own key. search_doc keeps each message's date key for its removal.
-- The rows are copied with their messages' date keys; the pair rows an older release
-- wrote (migration 00030) are left behind, and with them search_pairs.
CREATE TABLE search_term_next (
    tenant_id VARCHAR(64)  NOT NULL,
    term      VARCHAR(257) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    datekey   BIGINT       NOT NULL,
    id        BIGINT       NOT NULL,
    PRIMARY KEY (tenant_id, term, datekey, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO search_term_next (tenant_id, term, datekey, id)
    SELECT t.tenant_id, t.term, m.datekey, t.id FROM search_term t JOIN metadata m ON m.id = t.id
    WHERE LOCATE(' ', t.term) = 0
    ORDER BY t.tenant_id, t.term, m.datekey, t.id;
DROP TABLE search_term;
RENAME TABLE search_term_next TO search_term;
ALTER TABLE search_doc ADD COLUMN datekey BIGINT NOT NULL DEFAULT 0;
UPDATE search_doc d JOIN metadata m ON m.id = d.id SET d.datekey = m.datekey;
DROP TABLE search_pairs;

-- +goose Down
CREATE TABLE search_pairs (
    stored_to BIGINT NOT NULL
);
INSERT INTO search_pairs (stored_to) VALUES (0);
CREATE TABLE search_term_prev (
    tenant_id VARCHAR(64)  NOT NULL,
    term      VARCHAR(257) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    id        BIGINT       NOT NULL,
    PRIMARY KEY (tenant_id, term, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO search_term_prev (tenant_id, term, id)
    SELECT tenant_id, term, id FROM search_term ORDER BY tenant_id, term, id;
DROP TABLE search_term;
RENAME TABLE search_term_prev TO search_term;
ALTER TABLE search_doc DROP COLUMN datekey;
