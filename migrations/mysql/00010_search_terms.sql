-- +goose Up
-- One analyzer for every database (docs/architecture.md, "Search"): search_term stores the
-- terms analyzer.TermSet made of a message (words of up to 128 bytes and adjacent pairs
-- "w1 w2", up to 257 bytes), compared byte for byte (utf8mb4_bin). The old rows were read
-- another way: they are removed, and `mailledger reindex` fills the table again
-- (docs/operations.md).
DELETE FROM search_term;
ALTER TABLE search_term MODIFY term VARCHAR(257) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

-- The progress of `mailledger reindex`: one row while a run is under way, so that a run
-- killed part-way resumes after last_id.
CREATE TABLE reindex_state (
    name       VARCHAR(32) PRIMARY KEY,
    upto_id    BIGINT      NOT NULL,
    last_id    BIGINT      NOT NULL,
    messages   BIGINT      NOT NULL,
    failed     BIGINT      NOT NULL,
    started_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE reindex_state;
DELETE FROM search_term;
ALTER TABLE search_term MODIFY term VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
