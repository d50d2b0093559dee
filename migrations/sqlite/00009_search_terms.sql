-- +goose Up
-- One analyzer for every database (docs/architecture.md, "Search"): the index stores the
-- terms analyzer.TermSet made of a message (words and adjacent pairs), nothing of its own.
-- SQLite: FTS5 as a pure term store. The ascii tokenizer keeps every byte of a term (it
-- splits only at ASCII punctuation and white space, which terms never hold, and folds only
-- ASCII capitals, which terms never hold); '_' is a token character so that a pair
-- "w1 w2" is stored as the one token w1_w2. detail=none: no positions (phrases are pairs).
-- Contentless with contentless_delete: no text is kept and erasure can remove a message.
-- rowid = metadata.id. The old index read the text its own way: it is emptied, and
-- `mailledger reindex` fills the new one (docs/operations.md).
DROP TABLE message_search;
CREATE VIRTUAL TABLE message_search USING fts5 (
    terms, content = '', contentless_delete = 1, detail = none,
    tokenize = "ascii tokenchars '_'"
);

-- The progress of `mailledger reindex`: one row while a run is under way, so that a run
-- killed part-way resumes after last_id.
CREATE TABLE reindex_state (
    name       VARCHAR(32) PRIMARY KEY,
    upto_id    BIGINT      NOT NULL,
    last_id    BIGINT      NOT NULL,
    messages   BIGINT      NOT NULL,
    failed     BIGINT      NOT NULL,
    started_at TEXT        NOT NULL
);

-- +goose Down
DROP TABLE reindex_state;
DROP TABLE message_search;
CREATE VIRTUAL TABLE message_search USING fts5 (
    tenant_id UNINDEXED, subject, sender, recipients, body, attachments,
    content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
