-- +goose Up
-- The storage mode of the archive's message files (archive.StorageMode): 'local' or 's3',
-- recorded with the first archived message; a start with the other mode is refused.
CREATE TABLE archive_settings (
    name  VARCHAR(64)  PRIMARY KEY,
    value VARCHAR(255) NOT NULL
);

-- The object store's buckets as the hourly statistics job found them (archive/s3store):
-- one row per bucket and run; the newest row of a bucket is its current size.
CREATE TABLE bucket_stats (
    bucket  VARCHAR(63) NOT NULL,
    size    BIGINT      NOT NULL,
    objects BIGINT      NOT NULL,
    t       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (bucket, t)
);

-- +goose Down
DROP TABLE bucket_stats;
DROP TABLE archive_settings;
