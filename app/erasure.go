package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// ErasureArchive is what the erasure workflow needs of the archive: the assessment of a
// request (its scope and the holds that block it, in one query), the holds alone (checked
// again at execute), and the erasure itself. *archive.Archive implements it; a remote
// worker node can implement it later.
type ErasureArchive interface {
	Assess(ctx context.Context, tenant string, addrs []string) (archive.Scope, []archive.Hold, string, error)
	BlockingHolds(ctx context.Context, tenant string, addrs []string) ([]archive.Hold, string, error)
	Erase(ctx context.Context, r archive.EraseRequest) (int, error)
	ErasedCount(ctx context.Context, tenant, requestID string) (int, error)
	ReturnedFiles(ctx context.Context, tenant, requestID string) (int, error)
}

var _ ErasureArchive = (*archive.Archive)(nil)

// Erasure runs the GDPR Art. 17 erasure workflow: the commands that auditors call
// (create, assess, approve, reject, execute), the queries (get, list, audit), and the
// background consumers that assess and execute requests (see Register).
type Erasure struct {
	store    *eventstore.Store
	requests *repository[erasure.Request, *erasure.Request]
	arc      ErasureArchive
	cfg      ErasureConfig
}

// NewErasure returns the erasure use cases; it rejects nil dependencies and an invalid
// configuration.
func NewErasure(store *eventstore.Store, arc ErasureArchive, cfg ErasureConfig) (*Erasure, error) {
	if store == nil || arc == nil {
		return nil, errors.New("app: erasure needs a store and an archive")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("erasure: %w", err)
	}
	cfg.setDefaults()
	return &Erasure{store: store, arc: arc, cfg: cfg,
		requests: &repository[erasure.Request, *erasure.Request]{store: store, noun: "erasure request",
			streamType: erasure.StreamType, streamID: erasure.StreamID, decode: erasure.Decode}}, nil
}

// CreateRequestInput is the body of POST /api/v1/admin/gdpr/requests.
type CreateRequestInput struct {
	EmailAddresses []string `json:"email_addresses"`
	RequesterName  string   `json:"requester_name"`
}

// Create records a new pending request of tenant; the assessor consumer then assesses it.
// Its request_id GDPR-YYYY-NNNNN takes the next number of the year from
// gdpr_request_sequence, read under the ledger-head lock in the transaction that appends
// the request, so concurrent creates never share a number and never skip one.
func (e *Erasure) Create(ctx context.Context, tenant string, in CreateRequestInput, md domain.Metadata) (*RequestView, error) {
	keys, err := requestKeys(in.EmailAddresses)
	if err != nil {
		return nil, err
	}
	cmd := erasure.Create{TenantID: tenant, RequesterName: in.RequesterName, Actor: md.Actor, Addresses: keys}
	if _, err := erasure.NewRequest(cmd); err != nil {
		return nil, err
	}
	id, err := e.appendNew(ctx, cmd, md)
	if err != nil {
		return nil, err
	}
	return e.Get(ctx, tenant, id)
}

// appendNew numbers the request and appends its Created event in one transaction that
// holds the ledger-head lock, and returns the request id. The year comes from the
// Erasure's clock.
func (e *Erasure) appendNew(ctx context.Context, cmd erasure.Create, md domain.Metadata) (string, error) {
	year := e.cfg.Clock().UTC().Year()
	err := inLedgerTx(ctx, e.store, func(tx *ledgerTx) error {
		if err := eventstore.LockHead(ctx, tx.Tx); err != nil {
			return err
		}
		seq, err := lastSequence(ctx, tx.Tx, year)
		if err != nil {
			return err
		}
		cmd.RequestID = fmt.Sprintf("GDPR-%04d-%05d", year, seq+1)
		ev, err := erasure.NewRequest(cmd)
		if err != nil {
			return err
		}
		_, err = e.requests.appendTx(ctx, tx, nil, e.requests.stream(cmd.RequestID, cmd.TenantID), eventstore.NoStream, md, ev)
		return err
	})
	return cmd.RequestID, err
}

func lastSequence(ctx context.Context, tx *database.Tx, year int) (int, error) {
	var seq int
	err := tx.QueryRow(ctx, `SELECT last_sequence FROM gdpr_request_sequence WHERE year_prefix = ?`, fmt.Sprintf("%04d", year)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read request sequence: %w", err)
	}
	return seq, nil
}

// Assess starts a (re-)assessment of a request of tenant (AllTenants for an
// administrator); the assessor consumer finishes it. Allowed from pending, assessing,
// blocked and pending_approval.
func (e *Erasure) Assess(ctx context.Context, tenant, requestID string, md domain.Metadata) (*RequestView, error) {
	return e.decide(ctx, tenant, requestID, md, func(r *erasure.Request) (domain.Event, error) {
		return r.StartAssessment(md.Actor)
	})
}

// Approve approves a pending_approval request. While distinct approval is required, its
// creator gets erasure.ErrDistinctApprover.
func (e *Erasure) Approve(ctx context.Context, tenant, requestID string, md domain.Metadata) (*RequestView, error) {
	return e.decide(ctx, tenant, requestID, md, func(r *erasure.Request) (domain.Event, error) {
		return r.Approve(md.Actor, !e.cfg.AllowSameApprover)
	})
}

// Reject rejects a pending_approval request; reason must not be blank.
func (e *Erasure) Reject(ctx context.Context, tenant, requestID, reason string, md domain.Metadata) (*RequestView, error) {
	return e.decide(ctx, tenant, requestID, md, func(r *erasure.Request) (domain.Event, error) {
		return r.Reject(md.Actor, reason)
	})
}

// Execute starts the execution of an approved request: the legal holds are checked again
// first, and a hold placed since approval sends the request to blocked (the returned view
// says which). Otherwise the request is executing and the executor consumer erases its
// messages.
func (e *Erasure) Execute(ctx context.Context, tenant, requestID string, md domain.Metadata) (*RequestView, error) {
	return e.decide(ctx, tenant, requestID, md, func(r *erasure.Request) (domain.Event, error) {
		if r.Status != erasure.StatusApproved {
			return r.Execute(md.Actor, nil, "")
		}
		holds, reason, err := e.arc.BlockingHolds(ctx, r.TenantID, r.Addresses)
		if err != nil {
			return nil, err
		}
		return r.Execute(md.Actor, holdIDs(holds), reason)
	})
}

// ExtendDeadline moves an open request's due date to until (at most 90 days after its
// creation), for reason; the extension is an event of the request, with who and why.
func (e *Erasure) ExtendDeadline(ctx context.Context, tenant, requestID string, until time.Time, reason string, md domain.Metadata) (*RequestView, error) {
	return e.decide(ctx, tenant, requestID, md, func(r *erasure.Request) (domain.Event, error) {
		return r.ExtendDeadline(md.Actor, until, reason)
	})
}

func holdIDs(holds []archive.Hold) []string {
	ids := make([]string, len(holds))
	for i, h := range holds {
		ids[i] = h.ID
	}
	return ids
}

// decide loads a request of tenant, lets fn decide, and appends its event at the version
// it loaded: a concurrent change is eventstore.ErrConcurrentModification.
func (e *Erasure) decide(ctx context.Context, tenant, requestID string, md domain.Metadata, fn func(*erasure.Request) (domain.Event, error)) (*RequestView, error) {
	r, err := e.load(ctx, tenant, requestID)
	if err != nil {
		return nil, err
	}
	ev, err := fn(r)
	if err != nil {
		return nil, err
	}
	if err := e.append(ctx, r, ev, md); err != nil {
		return nil, err
	}
	return e.Get(ctx, tenant, requestID)
}

// append appends ev to r's stream at the version r was loaded at, and applies it to r.
func (e *Erasure) append(ctx context.Context, r *erasure.Request, ev domain.Event, md domain.Metadata) error {
	_, err := e.requests.append(ctx, r, e.requests.stream(r.RequestID, r.TenantID), r.Version, md, ev)
	return err
}

// load replays a request's events; a request of another tenant is ErrNotFound.
func (e *Erasure) load(ctx context.Context, tenant, requestID string) (*erasure.Request, error) {
	return e.requests.load(ctx, tenant, requestID)
}
