-- +goose Up
-- The tags header checks give a message when it is archived (docs/operations.md, "Header
-- checks"): one row per message and tag; searched with GET /api/v1/messages?tag=.
CREATE TABLE message_tag (
    id  BIGINT       NOT NULL,
    tag VARCHAR(255) NOT NULL,
    PRIMARY KEY (id, tag),
    INDEX message_tag_tag (tag, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE message_tag;
