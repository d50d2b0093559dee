-- +goose Up
-- One analyzer for every database (docs/architecture.md, "Search"): the index stores the
-- terms analyzer.TermSet made of a message (words and adjacent pairs "w1 w2"), nothing of
-- its own. PostgreSQL: array_to_tsvector keeps each term as a lexeme exactly as given (no
-- parser, no dictionary), and a GIN index finds them; queries are tsquery values built of
-- quoted lexemes. The old index read the text with to_tsvector('simple'): it is emptied,
-- and `mailledger reindex` fills the new one (docs/operations.md).
DROP TABLE message_search;
CREATE TABLE message_search (
    id       BIGINT   PRIMARY KEY,
    document TSVECTOR NOT NULL
);
-- GIN's pending list takes new entries unsorted and merges them into the index when it
-- passes gin_pending_list_limit; at the default 4 MB an archive of 100,000 messages merged
-- every few batches and imported at 70 messages/s, at 64 MB about 200 (2026-11-26,
-- docs/performance.md "At a million messages").
CREATE INDEX message_search_document ON message_search USING GIN (document) WITH (gin_pending_list_limit = 65536);

-- The progress of `mailledger reindex`: one row while a run is under way, so that a run
-- killed part-way resumes after last_id.
CREATE TABLE reindex_state (
    name       VARCHAR(32) PRIMARY KEY,
    upto_id    BIGINT      NOT NULL,
    last_id    BIGINT      NOT NULL,
    messages   BIGINT      NOT NULL,
    failed     BIGINT      NOT NULL,
    started_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE reindex_state;
DROP TABLE message_search;
CREATE TABLE message_search (
    id        BIGINT      PRIMARY KEY,
    tenant_id VARCHAR(64) NOT NULL,
    document  TSVECTOR    NOT NULL
);
CREATE INDEX message_search_document ON message_search USING GIN (document);
