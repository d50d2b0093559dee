package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mailledger/mailledger/archive"
)

// An export does not produce an email that an approved or executing erasure request is
// about to remove: the run keeps the addresses of those requests (refreshErasure, at the
// start and on every progress tick) and skips an email any of whose participants is one.

// refreshErasure reads the addresses of the tenant's approved and executing erasure
// requests: their mail is about to be erased, so it is not produced.
func (r *jobRun) refreshErasure(ctx context.Context) error {
	db := r.x.store.DB()
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT email_addresses FROM gdpr_requests WHERE tenant_id = ? AND status IN ('approved', 'executing')`), r.job.TenantID)
	if err != nil {
		return fmt.Errorf("read pending erasures: %w", err)
	}
	defer rows.Close()
	addrs := map[string]bool{}
	for rows.Next() {
		var list string
		if err := rows.Scan(&list); err != nil {
			return err
		}
		var parsed []string
		if err := json.Unmarshal([]byte(list), &parsed); err != nil {
			return fmt.Errorf("erasure addresses: %w", err)
		}
		for _, a := range parsed {
			addrs[a] = true
		}
	}
	r.erasure.Store(&addrs)
	return rows.Err()
}

func (r *jobRun) pendingErasure(doc *archive.Document) bool {
	addrs := *r.erasure.Load()
	for _, p := range doc.Participants {
		if addrs[p] {
			return true
		}
	}
	return false
}
