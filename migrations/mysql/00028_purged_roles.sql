-- +goose Up
-- Purge now removes the address roles of the messages it deletes, but of erased ones
-- (archive.Archive.Purge): a search by one address counts its matches from address_role
-- and the erased messages alone (docs/architecture.md, "Query plans"). The roles of the
-- messages purged before go now.
DELETE FROM address_role WHERE id IN (SELECT id FROM metadata WHERE deleted = 1 AND erased_by IS NULL);

-- +goose Down
-- The removed roles are not restored: they were of messages deleted for good.
SELECT 1;
