// Package app holds mailledger's use cases: the commands and queries that handlers call,
// and the background processes that follow the ledger. It is the only place that joins
// the domain, the event store and the archive.
package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/eventstore"
)

// Application gathers every use case that the HTTP handlers call.
type Application struct {
	Ledger     *Ledger
	LegalHolds *LegalHolds
	// Messages reads the archive; nil when the Application was built without one
	// (ApplicationConfig.Archive), and the archive routes then answer 503.
	Messages *Messages
	// Erasure runs the GDPR erasure workflow; nil without the archive, like Messages.
	Erasure *Erasure
	// Certificates issues the erasure certificates (HTML, PDF, bundle).
	Certificates *Certificates
	// Exports runs the eDiscovery exports; nil unless the Application was built with the
	// archive and ApplicationConfig.Exports, and the eDiscovery routes then answer 503. Its jobs run
	// only while Exports.Run runs (serve's background work).
	Exports *Exports
	// Tenancy resolves each request's caller and tenant (MULTITENANCY), once.
	Tenancy *Tenancy
	// Management is the management API (domains, customers, users, groups, header checks).
	Management *Management
	// RetentionRules manages the tenants' retention rules.
	RetentionRules *RetentionRules
	// Verification re-hashes the whole ledger in the background for the web console.
	Verification *LedgerVerification
	store        *eventstore.Store
}

// New returns the Application over store, signing checkpoints with signer; cfg adds the
// archive's use cases and configures them. It rejects an invalid cfg.
func New(store *eventstore.Store, signer *eventstore.Signer, cfg ApplicationConfig) (*Application, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ledger, err := NewLedger(store, signer)
	if err != nil {
		return nil, err
	}
	holds, err := NewLegalHolds(store)
	if err != nil {
		return nil, err
	}
	certs, err := NewCertificates(store, signer, cfg.Certificates)
	if err != nil {
		return nil, err
	}
	a := &Application{Ledger: ledger, LegalHolds: holds, Certificates: certs, store: store}
	if a.Verification, err = NewLedgerVerification(store, signer.Key().PublicKey, nil); err != nil {
		return nil, err
	}
	if a.RetentionRules, err = NewRetentionRules(store, cfg.RetentionChanged); err != nil {
		return nil, err
	}
	if a.Tenancy, err = NewTenancy(store.DB(), cfg.Multitenancy); err != nil {
		return nil, err
	}
	if a.Management, err = NewManagement(store, a.Tenancy, ManagementConfig{Multitenancy: cfg.Multitenancy,
		HeaderChecksChanged: cfg.HeaderChecksChanged, Storage: cfg.Storage}); err != nil {
		return nil, err
	}
	if err := a.addArchiveUses(store, cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// addArchiveUses adds the use cases that read the archive: Messages, Erasure and, with
// cfg.Exports, Exports.
func (a *Application) addArchiveUses(store *eventstore.Store, cfg ApplicationConfig) error {
	if cfg.Archive == nil {
		return nil
	}
	// One memory budget for the exports and the message reads.
	budget := NewMemoryBudget(DefaultMaxInFlightBytes)
	var exports ExportsConfig
	if cfg.Exports != nil {
		exports = *cfg.Exports
		budget = NewMemoryBudget(exports.MaxInFlightBytes)
		exports.Budget = budget
	}
	var err error
	if a.Messages, err = NewMessages(cfg.Archive, store, MessagesConfig{Budget: budget, Smarthost: cfg.Smarthost}); err != nil {
		return err
	}
	if a.Erasure, err = NewErasure(store, cfg.Archive, cfg.Erasure); err != nil {
		return err
	}
	if cfg.Exports != nil {
		a.Exports, err = NewExports(store, cfg.Archive, exports)
	}
	return err
}

// TenantOf returns the tenant of a user of domain: the domain itself in multi-tenant mode
// (MULTITENANCY=1), DefaultTenant otherwise.
func TenantOf(multitenancy bool, domain string) string {
	if multitenancy {
		return domain
	}
	return DefaultTenant
}

// Ping reports whether the database answers.
func (a *Application) Ping(ctx context.Context) error { return a.store.DB().PingContext(ctx) }

// Ledger answers the read-only questions about the ledger that regulators and auditors
// ask: its public key, a signed checkpoint, and proofs against checkpoints.
type Ledger struct {
	store  *eventstore.Store
	signer *eventstore.Signer
}

// NewLedger returns the ledger queries; it rejects nil dependencies.
func NewLedger(store *eventstore.Store, signer *eventstore.Signer) (*Ledger, error) {
	if store == nil || signer == nil {
		return nil, errors.New("app: ledger needs a store and a signer")
	}
	return &Ledger{store: store, signer: signer}, nil
}

// PublicKey returns the verifier key text of the checkpoint signatures.
func (l *Ledger) PublicKey() string { return l.signer.Key().PublicKey }

// KeyFingerprint is the public key's fingerprint as the certificates print it: the
// lower-case hex SHA-256 of the key text (render.KeyFingerprint).
func (l *Ledger) KeyFingerprint() string { return render.KeyFingerprint(l.PublicKey()) }

// Checkpoint returns a signed checkpoint of the current head, signing one on demand when
// the newest stored checkpoint is older than the head.
func (l *Ledger) Checkpoint(ctx context.Context) (*eventstore.Checkpoint, error) {
	return l.signer.Sign(ctx)
}

// InclusionProof proves that the event at Position is leaf LeafIndex of the tree of
// TreeSize events, whose root is RootHash. Checkpoint is the signed checkpoint of that
// size, nil when none was signed.
type InclusionProof struct {
	Position   int64
	LeafIndex  int64
	TreeSize   int64
	LeafHash   eventstore.Hash
	Hashes     [][]byte
	RootHash   eventstore.Hash
	Checkpoint *eventstore.Checkpoint
}

// InclusionProof proves the event at position against the tree of size events. A size of
// 0 means the newest checkpoint's size, signing a checkpoint of the head first when the
// newest one does not include position. A position or size beyond the head is
// eventstore.ErrNotFound.
func (l *Ledger) InclusionProof(ctx context.Context, position, size int64) (*InclusionProof, error) {
	if err := l.checkWithinHead(ctx, position); err != nil {
		return nil, err
	}
	if size == 0 {
		cp, err := l.checkpointCovering(ctx, position)
		if err != nil {
			return nil, err
		}
		size = cp.Size
	}
	hashes, err := l.store.InclusionProof(ctx, position, size)
	if err != nil {
		return nil, err
	}
	recs, err := l.store.ReadPositions(ctx, []int64{position})
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("%w: event at position %d", eventstore.ErrNotFound, position)
	}
	p := &InclusionProof{Position: position, LeafIndex: position - 1, TreeSize: size, LeafHash: recs[0].LeafHash, Hashes: hashes}
	if p.RootHash, p.Checkpoint, err = l.rootAndCheckpoint(ctx, size); err != nil {
		return nil, err
	}
	return p, nil
}

// ConsistencyProof proves that the tree of From events is a prefix of the tree of To
// events. FromCheckpoint and ToCheckpoint are the signed checkpoints of those sizes, nil
// when none was signed.
type ConsistencyProof struct {
	From, To                     int64
	Hashes                       [][]byte
	FromRoot, ToRoot             eventstore.Hash
	FromCheckpoint, ToCheckpoint *eventstore.Checkpoint
}

// ConsistencyProof proves that the tree of from events is a prefix of the tree of to
// events. A size beyond the head is eventstore.ErrNotFound.
func (l *Ledger) ConsistencyProof(ctx context.Context, from, to int64) (*ConsistencyProof, error) {
	hashes, err := l.store.ConsistencyProof(ctx, from, to)
	if err != nil {
		return nil, err
	}
	p := &ConsistencyProof{From: from, To: to, Hashes: hashes}
	if p.FromRoot, p.FromCheckpoint, err = l.rootAndCheckpoint(ctx, from); err != nil {
		return nil, err
	}
	if p.ToRoot, p.ToCheckpoint, err = l.rootAndCheckpoint(ctx, to); err != nil {
		return nil, err
	}
	return p, nil
}

func (l *Ledger) checkWithinHead(ctx context.Context, position int64) error {
	head, err := l.store.Head(ctx)
	if err != nil {
		return err
	}
	if position < 1 || position > head.Size {
		return fmt.Errorf("%w: position %d (ledger has %d events)", eventstore.ErrNotFound, position, head.Size)
	}
	return nil
}

// checkpointCovering returns the newest checkpoint if it includes position, and otherwise
// signs one of the head.
func (l *Ledger) checkpointCovering(ctx context.Context, position int64) (*eventstore.Checkpoint, error) {
	cp, err := l.store.LatestCheckpoint(ctx)
	if err == nil && cp.Size >= position {
		return cp, nil
	}
	if err != nil && !errors.Is(err, eventstore.ErrNotFound) {
		return nil, err
	}
	return l.signer.Sign(ctx)
}

// rootAndCheckpoint returns the tree root of size events and the checkpoint of that
// size, nil when there is none.
func (l *Ledger) rootAndCheckpoint(ctx context.Context, size int64) (eventstore.Hash, *eventstore.Checkpoint, error) {
	root, err := l.store.RootAt(ctx, size)
	if err != nil {
		return eventstore.Hash{}, nil, err
	}
	cp, err := l.store.CheckpointAt(ctx, size)
	if errors.Is(err, eventstore.ErrNotFound) {
		return root, nil, nil
	}
	if err != nil {
		return eventstore.Hash{}, nil, err
	}
	return root, cp, nil
}
