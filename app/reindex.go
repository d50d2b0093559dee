package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// Reindex events: one per completed run, counts only.
const (
	EventArchiveReindexed = "archive.reindexed"
	reindexStreamType     = "archive_reindex"
	reindexStreamID       = "archive-reindex"
	reindexActor          = "system:reindex"
	// SystemTenant is the tenant of the ledger's events that concern every tenant (a
	// reindex). No tenant can be named so (tenant ids are letters, digits, ., _ and -).
	SystemTenant = "*"
)

// archiveReindexed is the payload of EventArchiveReindexed: what one run of reindex did
// over every tenant. No message ids, addresses or content.
type archiveReindexed struct {
	Messages   int64  `json:"messages"`    // messages re-read and rebuilt
	Failed     int64  `json:"failed"`      // messages that could not be read, left as they were
	UpToID     int64  `json:"up_to_id"`    // the archive's highest message id when the run began
	Resumed    bool   `json:"resumed"`     // the run went on after an interruption
	StartedAt  string `json:"started_at"`  // RFC 3339
	FinishedAt string `json:"finished_at"` // RFC 3339
}

// Reindexer rebuilds the archive's search terms and address roles from the stored
// messages (archive.Reindex) and records each completed run in the ledger.
type Reindexer struct {
	store *eventstore.Store
	arc   *archive.Archive
	clock func() time.Time
}

// NewReindexer returns a Reindexer; it rejects nil dependencies and an invalid
// configuration.
func NewReindexer(store *eventstore.Store, arc *archive.Archive, cfg ReindexerConfig) (*Reindexer, error) {
	if store == nil || arc == nil {
		return nil, errors.New("app: reindexer needs a store and an archive")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("reindexer: %w", err)
	}
	cfg.setDefaults()
	return &Reindexer{store: store, arc: arc, clock: cfg.Clock}, nil
}

// Run runs or resumes a reindex (opt's Finish is the reindexer's own). The run's event is
// appended in the transaction that ends it, so a run is recorded exactly when it
// completed; an interrupted run records nothing until the run that resumes it completes.
func (r *Reindexer) Run(ctx context.Context, opt archive.ReindexOptions) (archive.ReindexResult, error) {
	ltx := &ledgerTx{store: r.store}
	opt.Finish = func(ctx context.Context, tx *database.Tx, res archive.ReindexResult) error {
		ltx.Tx = tx
		ev := eventstore.NewEvent{Type: EventArchiveReindexed, SchemaVersion: 1,
			Payload: archiveReindexed{Messages: res.Messages, Failed: res.Failed, UpToID: res.UpTo, Resumed: res.Resumed,
				StartedAt: res.StartedAt.UTC().Format(time.RFC3339), FinishedAt: r.clock().UTC().Format(time.RFC3339)},
			Metadata: domain.Metadata{Actor: reindexActor}}
		stream := eventstore.Stream{ID: reindexStreamID, Type: reindexStreamType, TenantID: SystemTenant}
		_, err := ltx.append(ctx, stream, eventstore.AnyVersion, ev)
		return err
	}
	res, err := r.arc.Reindex(ctx, opt)
	ltx.wake()
	if err != nil {
		return res, fmt.Errorf("reindex: %w", err)
	}
	return res, nil
}
