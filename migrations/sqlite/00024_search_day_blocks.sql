-- +goose Up
-- Day blocks in the FTS5 index (archive/dayblocks.go): every message is indexed with one
-- term per aligned block of 1, 2, 4 … 4,096 days holding its date, so that a common word's
-- page is read a few days at a time, newest first. Messages archived before this release
-- have no such terms: pending_to is the highest id then, and the walk is used once
-- `mailledger reindex` has rewritten every message up to it (it sets pending_to to 0). A
-- reindex interrupted before the upgrade starts over, so that none of its rows are missed.
CREATE TABLE search_day_blocks (
    pending_to BIGINT NOT NULL
);
INSERT INTO search_day_blocks (pending_to) SELECT COALESCE(MAX(id), 0) FROM metadata;
DELETE FROM reindex_state;

-- +goose Down
DROP TABLE search_day_blocks;
