-- +goose Up
-- The tags header checks give a message when it is archived (docs/operations.md, "Header
-- checks"): one row per message and tag; searched with GET /api/v1/messages?tag=.
CREATE TABLE message_tag (
    id  BIGINT       NOT NULL,
    tag VARCHAR(255) NOT NULL,
    PRIMARY KEY (id, tag)
);
CREATE INDEX message_tag_tag ON message_tag (tag, id);

-- +goose Down
DROP TABLE message_tag;
