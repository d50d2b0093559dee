-- +goose Up
-- FTS5 keeps a transaction's new postings in memory and writes them out as a new segment
-- of the lowest level when they pass `hashsize` bytes (1 MiB by default) and at COMMIT.
-- An import batch of 1,000 messages holds about 8 MiB of them: with the default it left
-- eight small segments, each then merged up through every level. At 16 MiB a batch is one
-- segment, eight times larger, which starts a level higher, so each posting is rewritten
-- once less on its way up (docs/performance.md, "SQLite: one segment a batch"). A commit
-- of a few messages (an SMTP group commit) flushes at COMMIT as before, with far less
-- than 16 MiB held. The setting is stored in the index and holds from the next write on.
INSERT INTO message_search (message_search, rank) VALUES ('hashsize', 16777216);

-- +goose Down
INSERT INTO message_search (message_search, rank) VALUES ('hashsize', 1048576);
