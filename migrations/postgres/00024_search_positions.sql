-- +goose Up
-- PostgreSQL's search documents hold each word with its positions and, as lexemes, only
-- the pairs those positions leave uncovered; a pair is found as two adjacent words
-- (docs/architecture.md, "Search"; archive/search_postgres.go). Documents written before
-- (every pair a lexeme, no positions) answer every query the same way, so the index is
-- kept: `mailledger reindex` rewrites them in the smaller form (docs/operations.md).
--
-- The documents are moved out of the heap into TOAST, so that reading the ids of a common
-- word's messages reads a narrow heap (at 30,000 messages 3 MB instead of 41 MB, and 8 ms
-- instead of 45 ms for a word in 29 % of them; docs/performance.md, "PostgreSQL:
-- positions instead of pairs"). PostgreSQL toasts a row only past about 2 KB, which a
-- document with positions seldom reaches, and then shrinks it to toast_tuple_target:
-- toast_pad, 2 KB that compress to 35 bytes, makes every new row pass that mark, and
-- target 128 then moves the document out. It applies to the rows written from now on.
ALTER TABLE message_search SET (toast_tuple_target = 128);
ALTER TABLE message_search ADD COLUMN toast_pad TEXT NOT NULL DEFAULT repeat('#', 2048);

-- +goose Down
ALTER TABLE message_search DROP COLUMN toast_pad;
ALTER TABLE message_search RESET (toast_tuple_target);
