// Package production writes the eDiscovery productions. A production is the output of one
// export job, written under {DIR_EXPORT}/<tenant_id>/ediscovery/<job_id>/
// (docs/operations.md, "eDiscovery exports"):
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
//
// The messages come from the archive as archive.Document values (read.go): the archive
// reads, decrypts, checks and parses them; this package only decides what of them a
// production holds and writes it.
package production

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/archive"
)

// Folder and file names of a production.
const (
	NativesDir     = "NATIVES"
	TextDir        = "TEXT"
	AttachmentsDir = "ATTACHMENTS"
	LoadFileCSV    = "loadfile.csv"
	LoadFileDAT    = "loadfile.dat"
)

// ErrInvalid means a production's tenant, job id or configuration is not valid.
var ErrInvalid = errors.New("bad production")

// prefixPattern is what a Bates prefix may be: it starts every file name.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// Config says what a production holds; the values are those of the
// export configuration object (docs/api.md).
type Config struct {
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

func (c Config) validate() error {
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
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, ", "))
	}
	return nil
}

// fileWriters is how many files of a production are written at once: creating a
// file costs a synchronous trip through the file system, so a few in parallel keep the
// single writer of the load files busy. 8 and 16 were measured against 4 (exportbench,
// docs/performance.md "Export"): the writer waited less for a free slot, but the exports
// were not faster against their floors on the loaded machine, and the natives-only export
// (every file in one folder) got fewer cores; 4 was kept. The bytes they hold stay in the
// export's memory budget until they are written (AddThen).
const fileWriters = 4

// Writer writes one job's files. It is not safe for concurrent use: one goroutine
// adds the documents, in Bates order; their files are written by a few goroutines of its
// own, at most fileWriters at a time.
type Writer struct {
	dir    string // the job directory's path, for messages
	root   string // DIR_EXPORT
	tenant string
	jobID  string
	dirFD  *os.File // the job directory: every file is created beneath it
	cfg    Config
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

// Create starts a production in an empty job directory (whatever an earlier,
// interrupted run left there is removed first) and writes the load files' header rows.
// A symbolic link at the tenant folder, the ediscovery folder or the job directory is
// ErrLinkRefused: nothing is removed or written through it.
func Create(root, tenant, jobID string, cfg Config) (*Writer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := Dir(root, tenant, jobID)
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
	p := &Writer{dir: dir, root: root, tenant: tenant, jobID: jobID, dirFD: dirFD, cfg: cfg, dirs: map[string]bool{}}
	p.writes.SetLimit(fileWriters)
	if err := p.openLoadFiles(); err != nil {
		_ = p.Abort()
		return nil, err
	}
	return p, nil
}

// Dir is the job directory.
func (p *Writer) Dir() string { return p.dir }

func (p *Writer) openLoadFiles() error {
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
func (p *Writer) BatesID(number int64) string {
	return fmt.Sprintf("%s_%0*d", p.cfg.Prefix, p.cfg.Digits, number)
}

// Add writes one document as Bates number: its native, text and attachment files (as
// configured; they are written in the background, Close waits for them) and its
// load-file rows. It returns the document's Bates id. Any error, an earlier file write's
// included, leaves the production unusable.
func (p *Writer) Add(number int64, doc *archive.Document) (string, error) {
	return p.AddThen(number, doc, nil)
}

// AddThen is Add, and calls written (when not nil) once every file of the document has
// been written or has failed, or at once when none is: the caller then knows the
// document's bytes are no longer held. It is called exactly once, whatever Add returns.
func (p *Writer) AddThen(number int64, doc *archive.Document, written func()) (string, error) {
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
func (p *Writer) write(folder, dir, name string, data []byte, sum *[32]byte, pending *pendingFiles) (string, error) {
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
func (p *Writer) writeFile(rel string, data []byte) error {
	f, err := createFile(p.dirFD, rel, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

func (p *Writer) writeRows(rows [][]string) error {
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
func (p *Writer) Close() (map[string]string, error) {
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

// Abort waits for the file writes in flight, closes the production and removes its
// directory.
func (p *Writer) Abort() error {
	_ = p.writes.Wait()
	for _, w := range p.loads {
		_, _ = w.close()
	}
	p.loads = nil
	_ = p.dirFD.Close() // already closed after Close
	return Remove(p.root, p.tenant, p.jobID)
}
