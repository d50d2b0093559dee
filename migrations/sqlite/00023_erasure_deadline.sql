-- +goose Up
-- Each erasure request's due date (docs/api.md, "Deadlines"): 30 days after its creation,
-- later when an auditor extended it (erasure.deadline_extended). A projection column: the
-- rows already here get the default from their creation.
ALTER TABLE gdpr_requests ADD COLUMN due_at TEXT NULL;
UPDATE gdpr_requests SET due_at = strftime('%Y-%m-%dT%H:%M:%f', created_at, '+30 days') || '000Z';
CREATE INDEX gdpr_requests_tenant_due ON gdpr_requests (tenant_id, due_at);

-- +goose Down
DROP INDEX gdpr_requests_tenant_due;
ALTER TABLE gdpr_requests DROP COLUMN due_at;
