-- +goose Up
-- Why a message's MIME part tree was read only in part (nested deeper than 100 levels, more
-- than 10,000 parts, …: docs/operations.md, "Parse bounds"); NULL when it was read whole.
ALTER TABLE metadata ADD COLUMN parse_note VARCHAR(255) NULL;

-- +goose Down
ALTER TABLE metadata DROP COLUMN parse_note;
