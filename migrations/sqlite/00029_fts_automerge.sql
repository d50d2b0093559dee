-- +goose Up
-- FTS5 merges a level's segments into one of the next level once `automerge` of them are
-- there (4 by default). At 8 an index of a million messages has half the levels, so each
-- posting is rewritten about half as many times on its way up, and the import's cost a
-- message stays flat where with 4 the merge of the largest level (the whole index read and
-- written once) fell at about a million messages; a query reads up to 7 segments a level
-- instead of 3, over fewer levels (docs/performance.md, "SQLite: FTS5's automerge at 8").
-- The setting is stored in the index (message_search_config) and holds for existing
-- archives from their next write on.
INSERT INTO message_search (message_search, rank) VALUES ('automerge', 8);

-- +goose Down
INSERT INTO message_search (message_search, rank) VALUES ('automerge', 4);
