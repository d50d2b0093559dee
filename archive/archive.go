// Package archive is the email archive: parsing, the sealed message store (local files or
// an object store), the metadata rows and the full-text index, on any of the three SQL
// dialects.
package archive

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/fault"
)

// DefaultRetention is how long a message is kept when configuration says nothing.
const DefaultRetention = 3650 * 24 * time.Hour

// ErrNotFound means no visible message has that id in that tenant.
var ErrNotFound = fault.New(fault.NotFound, "message not found")

// Archive stores and reads messages.
type Archive struct {
	db        *database.DB
	blobs     BlobStore
	keys      *Keyring
	parser    *Parser
	index     searchIndex
	retention time.Duration
	spam      spamPolicy
	tagger    HeaderTagger
	policy    RetentionPolicy
	clock     func() time.Time
	// modeRecorded: the storage mode is recorded (or checked) by a commit of this Archive.
	modeRecorded atomic.Bool
	// blocksReady: every message has its day blocks (dayblocks.go); once true it stays so.
	blocksReady atomic.Bool
}

// spamPolicy is what Commit does with a message that carries the spam header line.
type spamPolicy struct {
	discard   bool
	retention time.Duration
}

// Options configure an Archive.
type Options struct {
	Retention  time.Duration // default DefaultRetention
	SpamHeader string        // SPAM_HEADER_LINE
	// SpamRetention is how long spam is kept (SPAM_RETENTION_DAYS); 0 means Retention.
	SpamRetention time.Duration
	// DiscardSpam (SPAM_POLICY=discard) makes Commit store no spam: it answers
	// Result.Discarded instead.
	DiscardSpam bool
	// Tagger tags each message by its header block (header checks); nil tags nothing.
	Tagger HeaderTagger
	// Policy sets each message's retention by its tenant's retention rules; nil (or no
	// rule) leaves Retention. Spam keeps SpamRetention.
	Policy RetentionPolicy
	Clock  func() time.Time
}

// New returns an Archive over db (migrated), blobs and keys.
func New(db *database.DB, blobs BlobStore, keys *Keyring, opts Options) (*Archive, error) {
	if db == nil || blobs == nil || keys == nil {
		return nil, errors.New("archive: database, blob store and keyring are required")
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.SpamRetention <= 0 {
		opts.SpamRetention = opts.Retention
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	parser := NewParser(opts.SpamHeader)
	parser.Positions = db.Dialect == database.Postgres // what postgresIndex stores
	return &Archive{
		db: db, blobs: blobs, keys: keys, parser: parser,
		index: newSearchIndex(db.Dialect), retention: opts.Retention, clock: opts.Clock,
		spam: spamPolicy{discard: opts.DiscardSpam, retention: opts.SpamRetention}, tagger: opts.Tagger, policy: opts.Policy,
	}, nil
}

// DB returns the archive's database.
func (a *Archive) DB() *database.DB { return a.db }

// Parser returns the archive's MIME parser.
func (a *Archive) Parser() *Parser { return a.parser }

// Incoming is one message to archive.
type Incoming struct {
	Tenant   string
	Raw      []byte
	Envelope []string // SMTP RCPT TO addresses, when known
	Arrived  time.Time
	Source   string // where it came from (a file name), for error messages
}

// Prepared is a parsed and sealed message, ready to be committed. Preparing is the
// CPU-heavy part and may run on many goroutines at once.
type Prepared struct {
	In     Incoming
	Msg    *Parsed
	Sealed []byte
}

// Prepare parses and seals one message.
func (a *Archive) Prepare(in Incoming) (*Prepared, error) {
	if err := validTenant(in.Tenant); err != nil {
		return nil, err
	}
	msg, err := a.parser.Parse(in.Raw)
	if err != nil {
		return nil, err
	}
	msg.addEnvelope(in.Envelope)
	if a.tagger != nil {
		msg.Tags = a.tagger.Tags(in.Tenant, HeaderBlock(in.Raw))
	}
	sealed, err := a.keys.sealDigest(in.Tenant, in.Raw, msg.Digest)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if in.Arrived.IsZero() {
		in.Arrived = a.clock()
	}
	return &Prepared{In: in, Msg: msg, Sealed: sealed}, nil
}

// release drops what Commit does not read (the original bytes, sealed now; the decoded
// attachments, digested now; the body text, in Terms now), so that the messages an import
// holds between parsing and their commit cost their rows and sealed file alone.
func (p *Prepared) release() {
	p.In.Raw = nil
	p.Msg.Text = ""
	for i := range p.Msg.Attachments {
		p.Msg.Attachments[i].Content = nil
	}
}

func (m *Parsed) addEnvelope(rcpts []string) {
	m.Envelope = appendAddresses(m.Envelope, rcpts...)
	if len(rcpts) > 0 {
		m.Roles = analyzer.Distinct(append(m.Roles, analyzer.EnvelopeRoles("", rcpts)...))
	}
}

// Result is the outcome of committing one prepared message.
type Result struct {
	ID        int64
	Duplicate bool // the tenant already had a message with the same SHA-256
	Discarded bool // spam under the discard policy: accepted, not stored (ID 0)
}

func validTenant(t string) error {
	if err := validKey(t); err != nil || len(t) > 64 || t == "." {
		return fmt.Errorf("bad tenant id %q", t)
	}
	return nil
}
