-- +goose Up
-- Four indexes of metadata that no statement reads any more: a search by sender, sender
-- domain or date reads address_role and the date key (metadata_tenant_datekey), and no
-- list is ordered by the arrival or the Date header's text. Each was written on every
-- import, at a random place for the sender's and domain's (docs/performance.md, "Four
-- unused indexes of metadata dropped").
DROP INDEX metadata_fromdomain;
DROP INDEX metadata_sent;
DROP INDEX metadata_arrived;
DROP INDEX metadata_from_date;

-- +goose Down
CREATE INDEX metadata_from_date ON metadata (tenant_id, "from", msgdate);
CREATE INDEX metadata_arrived ON metadata (tenant_id, arrived);
CREATE INDEX metadata_sent ON metadata (tenant_id, sent);
CREATE INDEX metadata_fromdomain ON metadata (tenant_id, fromdomain);
