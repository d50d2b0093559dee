-- +goose Up
-- search_term holds words only (archive/search_mysql.go, mysqlIndex): the pairs of adjacent
-- words, six in ten of a message's terms, stay in search_doc, where a phrase is checked
-- once its words are found. The pair rows of the messages already indexed are not deleted
-- here (on a large archive that would be one transaction over most of the table):
-- stored_to is the highest id that may have some; removing a message deletes them, and
-- `mailledger reindex`, which removes and adds every message up to its start, sets
-- stored_to to 0. Nothing reads them meanwhile. A reindex interrupted before the upgrade
-- starts over, so that none of its messages keeps its pairs unnoticed.
CREATE TABLE search_pairs (
    stored_to BIGINT NOT NULL
);
INSERT INTO search_pairs (stored_to) SELECT COALESCE(MAX(id), 0) FROM metadata;
DELETE FROM reindex_state;

-- +goose Down
-- Messages indexed since the migration have no pair rows: a phrase would not find them
-- until `mailledger reindex` writes them again.
DROP TABLE search_pairs;
