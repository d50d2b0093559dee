package app

import (
	"context"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// EventErasuresReapplied records a run of Reapply: what it found of each completed
// erasure. It is in a stream of its own, so the requests' streams (and certificates) stay
// as they were.
const EventErasuresReapplied = "erasure.reapplied"

// ReappliedRequest is what Reapply found of one completed erasure: messages in its scope
// that were visible again (erased now) and files of its messages back in the store (their
// files go at the next purge).
type ReappliedRequest struct {
	RequestID     string `json:"request_id"`
	TenantID      string `json:"tenant_id"`
	Erased        int    `json:"erased"`
	FilesReturned int    `json:"files_returned"`
	// FromCertificate: the database did not know the erasure (it was restored from a
	// backup made before it); its kept certificate bundle proved it.
	FromCertificate bool `json:"from_certificate,omitempty"`
}

// ReapplyReport is the result of a run, as its event records it.
type ReapplyReport struct {
	Requests []ReappliedRequest `json:"requests"`
	Erased   int                `json:"erased"`
	Files    int                `json:"files_returned"`
	// Refused are kept certificate bundles that did not verify: not applied.
	Refused    []RefusedCertificate `json:"refused_certificates,omitempty"`
	StartedAt  time.Time            `json:"started_at"`
	FinishedAt time.Time            `json:"finished_at"`
}

// Reapply applies every completed erasure in the ledger again, after the database's
// archive tables or the store were restored from a backup that predates some of them: a
// message of an erasure's scope dated before its execution that is visible again is
// erased again (retained until today, out of the index; an active legal hold still keeps
// it), and an erased message whose file is back in the store is marked for the next
// purge. With ErasureConfig.Kept, the erasures that only a kept certificate bundle proves
// (the whole database, ledger included, restored from before them) are applied the same
// way from the bundle's scope and completion time. One erasure.reapplied event records
// the run, whatever it found, by actor.
func (e *Erasure) Reapply(ctx context.Context, actor string) (*ReapplyReport, error) {
	md := domain.Metadata{Actor: actor}
	done, err := e.queryRequests(ctx, `SELECT `+requestColumns+` FROM gdpr_requests WHERE status = ? ORDER BY id`, erasure.StatusCompleted)
	if err != nil {
		return nil, err
	}
	rep := &ReapplyReport{Requests: []ReappliedRequest{}, StartedAt: e.cfg.Clock().UTC()}
	kept, refused, err := e.keptErasures(completedIDs(done))
	if err != nil {
		return nil, err
	}
	rep.Refused = refused
	views := make([]*RequestView, 0, len(done)+len(kept))
	for i := range done {
		views = append(views, &done[i])
	}
	for i := range kept {
		views = append(views, &kept[i].view)
	}
	for i, v := range views {
		r, err := e.reapplyOne(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("reapply %s: %w", v.RequestID, err)
		}
		r.FromCertificate = i >= len(done)
		if r.Erased > 0 || r.FilesReturned > 0 {
			rep.Requests = append(rep.Requests, r)
			rep.Erased, rep.Files = rep.Erased+r.Erased, rep.Files+r.FilesReturned
		}
	}
	rep.FinishedAt = e.cfg.Clock().UTC()
	stream := eventstore.Stream{ID: "erasure-reapply", Type: "erasure_reapply", TenantID: SystemTenant}
	if _, err := e.store.Append(ctx, stream, eventstore.AnyVersion, eventstore.NewEvent{Type: EventErasuresReapplied,
		SchemaVersion: 1, Payload: rep, Metadata: md}); err != nil {
		return nil, err
	}
	return rep, nil
}

// reapplyOne re-applies one completed erasure.
func (e *Erasure) reapplyOne(ctx context.Context, v *RequestView) (ReappliedRequest, error) {
	out := ReappliedRequest{RequestID: v.RequestID, TenantID: v.TenantID}
	before, err := e.arc.ErasedCount(ctx, v.TenantID, v.RequestID)
	if err != nil {
		return out, err
	}
	req := archive.EraseRequest{Tenant: v.TenantID, RequestID: v.RequestID, Addresses: v.EmailAddresses,
		Today: e.cfg.Clock(), Batch: e.cfg.EraseBatch, Lock: eventstore.LockHead}
	if v.ExecutedAt != nil {
		req.DatedBefore = *v.ExecutedAt
	}
	after, err := e.arc.Erase(ctx, req)
	if err != nil {
		return out, err
	}
	out.Erased = after - before
	out.FilesReturned, err = e.arc.ReturnedFiles(ctx, v.TenantID, v.RequestID)
	return out, err
}

// ArchiveLooksOlder reports whether the archive's tables look older than the ledger: a
// completed erasure that deleted messages has none marked with its id, as after a restore
// of the archive from a backup made before it; or, with ErasureConfig.Kept, a kept
// certificate proves such an erasure that the database does not know at all (the whole
// database restored). serve then runs Reapply at start.
func (e *Erasure) ArchiveLooksOlder(ctx context.Context) (bool, error) {
	all, err := e.queryRequests(ctx, `SELECT `+requestColumns+` FROM gdpr_requests WHERE status = ? ORDER BY id`, erasure.StatusCompleted)
	if err != nil {
		return false, err
	}
	if older, err := e.keptLooksOlder(ctx, completedIDs(all)); older || err != nil {
		return older, err
	}
	done := make([]RequestView, 0, len(all))
	for _, v := range all {
		if v.DeletedCount > 0 {
			done = append(done, v)
		}
	}
	for _, v := range done {
		n, err := e.arc.ErasedCount(ctx, v.TenantID, v.RequestID)
		if err != nil {
			return false, err
		}
		if n == 0 {
			return true, nil
		}
	}
	return false, nil
}
