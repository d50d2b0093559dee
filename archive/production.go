package archive

import (
	"cmp"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/database"
)

// A production is the output of one eDiscovery export job, written under
// {DIR_EXPORT}/<tenant_id>/ediscovery/<job_id>/ (docs/operations.md, "eDiscovery exports"):
//
//	NATIVES/<PREFIX>_<NUMBER>.eml                  the archived original, byte for byte
//	TEXT/<PREFIX>_<NUMBER>.txt                     the text/plain body, else text from HTML
//	ATTACHMENTS/<PREFIX>_<NUMBER>_<SEQ>.<ext>      each attachment, decoded
//	loadfile.csv, loadfile.dat                     the load files (loadfile.go)
//
// With ByCustodian the three folders sit under a folder named by the sender's address.
// Every path component that comes from outside (tenant, job id, prefix, sender) is
// checked or made safe before use, and every folder and file is reached from a
// descriptor of DIR_EXPORT without following a symbolic link (exportdir.go), so nothing
// is ever written outside it.

// Folder and file names of a production.
const (
	NativesDir     = "NATIVES"
	TextDir        = "TEXT"
	AttachmentsDir = "ATTACHMENTS"
	LoadFileCSV    = "loadfile.csv"
	LoadFileDAT    = "loadfile.dat"
	// MaxAttachments is the most attachments one produced email may have: their
	// sequence is three digits.
	MaxAttachments = 999
)

// ErrBadProduction means a production's tenant, job id or configuration is not valid.
var ErrBadProduction = errors.New("bad production")

// ErrUnreadable means a message's file passed the integrity checks but cannot be produced:
// it does not parse, or it has more attachments than a three-digit sequence numbers.
var ErrUnreadable = errors.New("message cannot be produced")

var (
	componentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	jobIDPattern     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	prefixPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
)

// ProductionDir returns the directory of a job, {root}/<tenant>/ediscovery/<jobID>, after
// checking that tenant is a plain name and jobID a lower-case UUID.
func ProductionDir(root, tenant, jobID string) (string, error) {
	if !componentPattern.MatchString(tenant) || strings.Contains(tenant, "..") {
		return "", fmt.Errorf("%w: tenant %q", ErrBadProduction, tenant)
	}
	if !jobIDPattern.MatchString(jobID) {
		return "", fmt.Errorf("%w: job id %q", ErrBadProduction, jobID)
	}
	if root == "" {
		return "", fmt.Errorf("%w: no export directory", ErrBadProduction)
	}
	return filepath.Join(root, tenant, "ediscovery", jobID), nil
}

// RemoveProduction removes a job's directory and everything in it, following no
// symbolic link: a link planted at the job directory or inside it is removed itself, and
// one at the tenant or ediscovery folder is ErrLinkRefused. A missing directory is not
// an error.
func RemoveProduction(root, tenant, jobID string) error {
	if _, err := ProductionDir(root, tenant, jobID); err != nil {
		return err
	}
	parent, err := openExportDir(root, tenant, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove production: %w", err)
	}
	defer parent.Close()
	if err := removeAll(parent, jobID); err != nil {
		return fmt.Errorf("remove production: %w", err)
	}
	return nil
}

// CheckProduction returns nil when a job's directory is there, reached without a
// symbolic link; fs.ErrNotExist when it is missing, ErrLinkRefused for a link.
func CheckProduction(root, tenant, jobID string) error {
	dir, err := openProductionDir(root, tenant, jobID)
	if err != nil {
		return err
	}
	return dir.Close()
}

// openProductionDir opens an existing job directory, through no link.
func openProductionDir(root, tenant, jobID string) (*os.File, error) {
	if _, err := ProductionDir(root, tenant, jobID); err != nil {
		return nil, err
	}
	parent, err := openExportDir(root, tenant, false)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return openDir(parent, jobID)
}

// Document is an archived email read for a production: its metadata, its original bytes
// (integrity checked), its parse and the hashes of the original.
type Document struct {
	EmailID int64
	Arrived time.Time
	// Participants are the message's addresses by the address rule (address_role): its
	// senders, then its recipients, as their keys, as the erasure scope counts them.
	Participants []string
	Raw          []byte
	Msg          *Parsed
	MD5          [16]byte
	SHA256       [32]byte
	// AttachmentMD5 holds the MD5 of each of Msg.Attachments' decoded content, computed by
	// the reading worker so the production's single writer only formats rows.
	AttachmentMD5 [][16]byte
}

// Custodian is the document's custodian: its sender's address, lower-cased ("" when the
// message names none).
func (d *Document) Custodian() string { return d.Msg.From }

// ReadDocument reads a visible message of tenant for a production: ErrNotFound when it
// does not exist there, or is erased or purged; ErrIntegrity (or ErrUnknownKey) when its
// file fails the checks; ErrUnreadable when it cannot be produced. Other errors are the
// database's or the blob store's.
func (a *Archive) ReadDocument(ctx context.Context, tenant string, id int64) (*Document, error) {
	m, doc, err := a.readDocumentRow(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	raw, digest, err := a.readFile(ctx, m)
	if err != nil {
		return nil, err
	}
	doc.Raw = raw
	return doc, doc.parse(a.parser, digest)
}

// ReadNative is ReadDocument for a production of natives only: the original is decrypted
// and checked, and hashed with MD5, but not parsed; the load files' columns come from the
// metadata stored at import (recipients in address order, attachment names without their
// content). Its errors are ReadDocument's.
func (a *Archive) ReadNative(ctx context.Context, tenant string, id int64) (*Document, error) {
	m, doc, err := a.readDocumentRow(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if doc.Msg.Attachments, err = a.attachmentNames(ctx, id, len(doc.Msg.Attachments)); err != nil {
		return nil, err
	}
	raw, digest, err := a.readFile(ctx, m)
	if err != nil {
		return nil, err
	}
	if len(doc.Msg.Attachments) > MaxAttachments {
		return nil, fmt.Errorf("%w: message %d has %d attachments, more than %d", ErrUnreadable, id, len(doc.Msg.Attachments), MaxAttachments)
	}
	doc.Raw, doc.SHA256, doc.MD5 = raw, digest, md5.Sum(raw)
	doc.Msg.Digest, doc.Msg.Size = digest, len(raw)
	return doc, nil
}

// attachmentNames reads the stored attachment rows of a message (n of them; none read
// when n is 0): sequence, name, type and size, without content.
func (a *Archive) attachmentNames(ctx context.Context, id int64, n int) ([]Attachment, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := a.db.QueryCached(ctx, `SELECT seq, name, type, size FROM attachment WHERE message_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read attachments of %d: %w", id, err)
	}
	defer rows.Close()
	out := make([]Attachment, 0, n)
	for rows.Next() {
		var at Attachment
		if err := rows.Scan(&at.Seq, &at.Name, &at.Type, &at.Size); err != nil {
			return nil, fmt.Errorf("read attachments of %d: %w", id, err)
		}
		out = append(out, at)
	}
	return out, rows.Err()
}

// participants returns the addresses of a message by the address rule (address_role):
// its senders, then its recipients, each once, in key order within a role.
func (a *Archive) participants(ctx context.Context, id int64) ([]string, error) {
	rows, err := a.db.QueryCached(ctx, `SELECT addr FROM address_role WHERE id = ? ORDER BY role, addr`, id)
	if err != nil {
		return nil, fmt.Errorf("read the addresses of message %d: %w", id, err)
	}
	defer rows.Close()
	var out []string
	seen := map[string]bool{}
	for rows.Next() {
		var addr string
		if err := rows.Scan(&addr); err != nil {
			return nil, err
		}
		if !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	return out, rows.Err()
}

// readDocumentRow reads a document's metadata and its participants in one query: the
// metadata row joined with its recipient rows. doc.Msg holds the stored metadata (with
// len(Attachments) the stored count), which ReadDocument replaces by the parse.
func (a *Archive) readDocumentRow(ctx context.Context, tenant string, id int64) (*Message, *Document, error) {
	q := `SELECT m."from", m.arrived, m.digest, m.subject, m.sent, m.message_id, m.in_reply_to, m.refs, m.attachments, r."to", r.kind
		FROM metadata m LEFT JOIN rcpt r ON r.id = m.id
		WHERE m.id = ? AND m.tenant_id = ? AND ` + visible + ` ORDER BY r."to"`
	rows, err := a.db.QueryCached(ctx, q, id, tenant)
	if err != nil {
		return nil, nil, fmt.Errorf("read message %d: %w", id, err)
	}
	defer rows.Close()
	m := &Message{ID: id, TenantID: tenant}
	doc := &Document{EmailID: id, Msg: &Parsed{}}
	found := false
	for rows.Next() {
		var arrived, sent any
		var to, kind sql.NullString
		var attachments int
		p := doc.Msg
		if err := rows.Scan(&m.From, &arrived, &m.Digest, &p.Subject, &sent, &p.MessageID, &p.InReplyTo, &p.References, &attachments, &to, &kind); err != nil {
			return nil, nil, fmt.Errorf("read message %d: %w", id, err)
		}
		if !found {
			found = true
			if doc.Arrived, err = database.TimeValue(arrived); err != nil {
				return nil, nil, err
			}
			if sent != nil {
				if p.Sent, err = database.TimeValue(sent); err != nil {
					return nil, nil, err
				}
			}
			p.From, p.Attachments = m.From, make([]Attachment, attachments)
		}
		if to.Valid {
			p.addRecipient(kind.String, to.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read message %d: %w", id, err)
	}
	if !found {
		return nil, nil, ErrNotFound
	}
	if doc.Participants, err = a.participants(ctx, id); err != nil {
		return nil, nil, err
	}
	return m, doc, nil
}

// addRecipient adds a stored recipient of kind to the metadata.
func (p *Parsed) addRecipient(kind, addr string) {
	switch kind {
	case KindTo:
		p.To = append(p.To, addr)
	case KindCc:
		p.Cc = append(p.Cc, addr)
	case KindBcc:
		p.Bcc = append(p.Bcc, addr)
	case KindEnvelope:
		p.Envelope = append(p.Envelope, addr)
	}
}

func (d *Document) parse(p *Parser, digest [32]byte) error {
	msg, sums, err := p.parseForProduction(d.Raw, digest)
	if err != nil {
		return fmt.Errorf("%w: message %d: %w", ErrUnreadable, d.EmailID, err)
	}
	if len(msg.Attachments) > MaxAttachments {
		return fmt.Errorf("%w: message %d has %d attachments, more than %d", ErrUnreadable, d.EmailID, len(msg.Attachments), MaxAttachments)
	}
	d.Msg, d.SHA256, d.MD5, d.AttachmentMD5 = msg, msg.Digest, md5.Sum(d.Raw), sums
	return nil
}

// ProductionConfig says what a production holds; the values are those of the
// export configuration object (docs/api.md).
type ProductionConfig struct {
	Prefix      string
	Digits      int
	Natives     bool
	Text        bool
	Attachments bool
	ByCustodian bool
	CSV, DAT    bool   // which load files to write
	DateFormat  string // iso8601, us or eu
	// Concordance selects the classic Concordance DAT delimiters instead of the default (spec) set.
	Concordance bool
}

func (c ProductionConfig) validate() error {
	var problems []string
	if !prefixPattern.MatchString(c.Prefix) {
		problems = append(problems, fmt.Sprintf("prefix %q", c.Prefix))
	}
	if c.Digits < 1 || c.Digits > 10 {
		problems = append(problems, fmt.Sprintf("digits %d", c.Digits))
	}
	if _, ok := dateLayouts[c.DateFormat]; !ok {
		problems = append(problems, fmt.Sprintf("date format %q", c.DateFormat))
	}
	if !c.CSV && !c.DAT {
		problems = append(problems, "no load file")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrBadProduction, strings.Join(problems, ", "))
	}
	return nil
}

// productionWriters is how many files of a production are written at once: creating a
// file costs a synchronous trip through the file system, so a few in parallel keep the
// single writer of the load files busy. 8 and 16 were measured against 4 (exportbench,
// docs/performance.md "Export"): the writer waited less for a free slot, but the exports
// were not faster against their floors on the loaded machine, and the natives-only export
// (every file in one folder) got fewer cores; 4 was kept. The bytes they hold stay in the
// export's memory budget until they are written (AddThen).
const productionWriters = 4

// Production writes one job's files. It is not safe for concurrent use: one goroutine
// adds the documents, in Bates order; their files are written by a few goroutines of its
// own, at most productionWriters at a time.
type Production struct {
	dir    string // the job directory's path, for messages
	root   string // DIR_EXPORT
	tenant string
	jobID  string
	dirFD  *os.File // the job directory: every file is created beneath it
	cfg    ProductionConfig
	loads  []*loadWriter
	dirs   map[string]bool // folders made so far
	writes errgroup.Group
	failed atomic.Pointer[error] // the first failed file write

	mu      sync.Mutex
	written []writtenFile // every file written, for the manifest
}

// writtenFile is one file of the production as the manifest counts it.
type writtenFile struct {
	path string // relative to the job directory, with "/"
	sum  [32]byte
	size int64
}

// CreateProduction starts a production in an empty job directory (whatever an earlier,
// interrupted run left there is removed first) and writes the load files' header rows.
// A symbolic link at the tenant folder, the ediscovery folder or the job directory is
// ErrLinkRefused: nothing is removed or written through it.
func CreateProduction(root, tenant, jobID string, cfg ProductionConfig) (*Production, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := ProductionDir(root, tenant, jobID)
	if err != nil {
		return nil, err
	}
	parent, err := openExportDir(root, tenant, true)
	if err != nil {
		return nil, fmt.Errorf("create production: %w", err)
	}
	dirFD, err := createJobDir(parent, jobID)
	parent.Close()
	if err != nil {
		return nil, fmt.Errorf("create production: %w", err)
	}
	p := &Production{dir: dir, root: root, tenant: tenant, jobID: jobID, dirFD: dirFD, cfg: cfg, dirs: map[string]bool{}}
	p.writes.SetLimit(productionWriters)
	if err := p.openLoadFiles(); err != nil {
		_ = p.Abort()
		return nil, err
	}
	return p, nil
}

// createJobDir makes the job directory jobID of parent anew and opens it; a link there is
// ErrLinkRefused.
func createJobDir(parent *os.File, jobID string) (*os.File, error) {
	link, err := isLink(parent, jobID)
	if err != nil {
		return nil, err
	}
	if link {
		return nil, linkRefused(parent.Name() + "/" + jobID)
	}
	if err := removeAll(parent, jobID); err != nil {
		return nil, err
	}
	if err := makeDirs(parent, jobID, 0o750); err != nil {
		return nil, err
	}
	return openDir(parent, jobID)
}

// Dir is the job directory.
func (p *Production) Dir() string { return p.dir }

func (p *Production) openLoadFiles() error {
	if p.cfg.CSV {
		w, err := newCSVWriter(p.dirFD, LoadFileCSV)
		if err != nil {
			return err
		}
		p.loads = append(p.loads, w)
	}
	if p.cfg.DAT {
		delims := specDAT
		if p.cfg.Concordance {
			delims = concordanceDAT
		}
		w, err := newDATWriter(p.dirFD, LoadFileDAT, delims)
		if err != nil {
			return err
		}
		p.loads = append(p.loads, w)
	}
	return nil
}

// BatesID is the Bates id of number: the prefix, "_" and the number zero-padded to the
// configured digits.
func (p *Production) BatesID(number int64) string {
	return fmt.Sprintf("%s_%0*d", p.cfg.Prefix, p.cfg.Digits, number)
}

// Add writes one document as Bates number: its native, text and attachment files (as
// configured; they are written in the background, Close waits for them) and its
// load-file rows. It returns the document's Bates id. Any error, an earlier file write's
// included, leaves the production unusable.
func (p *Production) Add(number int64, doc *Document) (string, error) {
	return p.AddThen(number, doc, nil)
}

// AddThen is Add, and calls written (when not nil) once every file of the document has
// been written or has failed, or at once when none is: the caller then knows the
// document's bytes are no longer held. It is called exactly once, whatever Add returns.
func (p *Production) AddThen(number int64, doc *Document, written func()) (string, error) {
	pending := &pendingFiles{done: written}
	pending.add() // until every write is handed out
	defer pending.finish()
	if err := p.failed.Load(); err != nil {
		return "", *err
	}
	id := p.BatesID(number)
	folder := ""
	if p.cfg.ByCustodian {
		folder = CustodianFolder(doc.Custodian())
	}
	e := entry{docID: id, doc: doc}
	var err error
	if p.cfg.Natives {
		if e.nativePath, err = p.write(folder, NativesDir, id+".eml", doc.Raw, &doc.SHA256, pending); err != nil {
			return "", err
		}
	}
	if p.cfg.Text {
		if e.textPath, err = p.write(folder, TextDir, id+".txt", []byte(doc.Msg.Text), nil, pending); err != nil {
			return "", err
		}
	}
	if p.cfg.Attachments {
		for _, att := range doc.Msg.Attachments {
			name := fmt.Sprintf("%s_%03d.%s", id, att.Seq, AttachmentExt(att.Name, att.Type))
			rel, err := p.write(folder, AttachmentsDir, name, att.Content, &att.Digest, pending)
			if err != nil {
				return "", err
			}
			e.attachPaths = append(e.attachPaths, rel)
		}
	}
	return id, p.writeRows(e.rows(p.cfg))
}

// pendingFiles counts a document's files not yet written; done is called when none is left.
type pendingFiles struct {
	n    atomic.Int32
	done func()
}

func (f *pendingFiles) add() { f.n.Add(1) }

func (f *pendingFiles) finish() {
	if f.n.Add(-1) == 0 && f.done != nil {
		f.done()
	}
}

// write stores data as dir/name under the custodian folder (when there is one), in the
// background, and returns its path relative to the job directory, with "/". sum is the
// SHA-256 of data when the caller knows it (a native's digest was checked when it was
// read, an attachment's computed when it was decoded); nil has it computed here. pending
// counts the write until it ends.
func (p *Production) write(folder, dir, name string, data []byte, sum *[32]byte, pending *pendingFiles) (string, error) {
	rel := path.Join(folder, dir)
	if !p.dirs[rel] {
		if err := makeDirs(p.dirFD, rel, 0o750); err != nil {
			return "", fmt.Errorf("create %s: %w", rel, err)
		}
		p.dirs[rel] = true
	}
	rel = path.Join(rel, name)
	pending.add()
	p.writes.Go(func() error {
		defer pending.finish()
		if err := p.writeFile(rel, data); err != nil {
			err = fmt.Errorf("write %s: %w", rel, err)
			p.failed.CompareAndSwap(nil, &err)
			return err
		}
		f := writtenFile{path: rel, size: int64(len(data))}
		if sum != nil {
			f.sum = *sum
		} else {
			f.sum = sha256.Sum256(data)
		}
		p.mu.Lock()
		p.written = append(p.written, f)
		p.mu.Unlock()
		return nil
	})
	return rel, nil
}

// writeFile creates the new file rel with data, beneath the job directory and through
// no link (createFile).
func (p *Production) writeFile(rel string, data []byte) error {
	f, err := createFile(p.dirFD, rel, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

func (p *Production) writeRows(rows [][]string) error {
	for _, w := range p.loads {
		for _, row := range rows {
			if err := w.write(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close waits for the file writes, finishes the load files and returns the SHA-256 (hex)
// of each, by file name.
func (p *Production) Close() (map[string]string, error) {
	hashes := map[string]string{}
	errs := []error{p.writes.Wait()}
	for _, w := range p.loads {
		sum, err := w.close()
		errs = append(errs, err)
		hashes[w.name] = hex.EncodeToString(sum[:])
		p.written = append(p.written, writtenFile{path: w.name, sum: sum, size: w.size})
	}
	p.loads = nil
	errs = append(errs, p.dirFD.Close())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return hashes, nil
}

// Manifest is the Manifest of a closed production, made from what its writers hashed as
// they wrote: the same value as ProductionManifest of the job directory, without reading
// the production back.
func (p *Production) Manifest() Manifest {
	files := slices.Clone(p.written)
	slices.SortFunc(files, func(a, b writtenFile) int { return compareWalkOrder(a.path, b.path) })
	m := Manifest{Files: len(files)}
	outer := sha256.New()
	for _, f := range files {
		fmt.Fprintf(outer, "%s  %s\n", hex.EncodeToString(f.sum[:]), f.path)
		m.Size += f.size
	}
	m.Hash = hex.EncodeToString(outer.Sum(nil))
	return m
}

// compareWalkOrder orders slash-separated paths as io/fs.WalkDir visits them: component by
// component, each folder's entries sorted by name.
func compareWalkOrder(a, b string) int {
	for {
		ca, restA, moreA := strings.Cut(a, "/")
		cb, restB, moreB := strings.Cut(b, "/")
		if c := strings.Compare(ca, cb); c != 0 {
			return c
		}
		if !moreA || !moreB {
			return cmp.Compare(boolInt(moreA), boolInt(moreB))
		}
		a, b = restA, restB
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Abort waits for the file writes in flight, closes the production and removes its
// directory.
func (p *Production) Abort() error {
	_ = p.writes.Wait()
	for _, w := range p.loads {
		_, _ = w.close()
	}
	p.loads = nil
	_ = p.dirFD.Close() // already closed after Close
	return RemoveProduction(p.root, p.tenant, p.jobID)
}

// CustodianFolder makes a custodian's address safe as one folder name: lower-cased,
// every character but a-z 0-9 . _ - @ + replaced by "_", no leading dot, at most 128
// bytes; "unknown" when nothing is left. A leading - + or @ becomes "_" too: a path
// then never starts with a character a spreadsheet reads as a formula (the CSV load file
// keeps paths exact), nor a command reads as an option.
func CustodianFolder(addr string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(addr) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', strings.ContainsRune("._-@+", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if name != "" && strings.IndexByte("-+@", name[0]) >= 0 {
		name = "_" + name[1:]
	}
	if len(name) > 128 {
		name = name[:128]
	}
	if name == "" {
		return "unknown"
	}
	return name
}

// Sizes returns the size of each visible message of tenant among ids (at most a few
// hundred per call), by id; an id that is not one (another tenant's, erased, purged,
// unknown) is absent. An export weighs its emails by it before reading them.
func (a *Archive) Sizes(ctx context.Context, tenant string, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, tenant)
	for _, id := range ids {
		args = append(args, id)
	}
	q := `SELECT m.id, m.size FROM metadata m WHERE m.tenant_id = ? AND m.id IN (` + database.InList(len(ids)) + `) AND ` + visible
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read message sizes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, size int64
		if err := rows.Scan(&id, &size); err != nil {
			return nil, fmt.Errorf("read message sizes: %w", err)
		}
		out[id] = size
	}
	return out, rows.Err()
}
