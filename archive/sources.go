package archive

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/semaphore"
)

// An import source is one message read from a path: a file, or one message of an mbox.
type source struct {
	name string // file name, or "file.mbox#3" for the third message of an mbox
	raw  []byte
	err  error // reading failed; counted as a failure naming the file
	// countsFile marks the first message read from a file, for progress by files.
	countsFile bool
}

// isMbox says whether path is an mbox file: by name (*.mbox, *.mbx, "mbox", "Inbox"-style
// Thunderbird files are not guessed). Any other file is one message, even when it starts
// with an mbox "From " line (the parser skips that line; the stored bytes keep it).
func isMbox(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	return base == "mbox" || strings.HasSuffix(base, ".mbox") || strings.HasSuffix(base, ".mbx")
}

// isMaildir says whether dir holds cur/, new/ and tmp/.
func isMaildir(dir string) bool {
	for _, sub := range []string{"cur", "new", "tmp"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// SourceFiles turns import paths into the files to read, in a stable order: files as
// given, directories walked (hidden entries and README files skipped; a maildir's tmp/
// skipped, as its files are still being delivered). The importer reads what it lists.
func SourceFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		files, err := walkDir(p)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

func walkDir(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if name == "tmp" && isMaildir(filepath.Dir(p)) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.EqualFold(name, "README.md") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// readSources sends every message of files to out, closing it at the end. Each message
// first takes its weight of budget, which the importer gives back when it takes the
// message off the queue.
func readSources(ctx context.Context, files []string, out chan<- source, budget *semaphore.Weighted, weight func(int) int64) {
	defer close(out)
	send := func(s source) bool {
		if budget.Acquire(ctx, weight(len(s.raw))) != nil {
			return false
		}
		select {
		case out <- s:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, f := range files {
		if ctx.Err() != nil {
			return
		}
		if isMbox(f) {
			if err := readMbox(ctx, f, send); err != nil {
				send(source{name: f, err: err, countsFile: true})
			}
			continue
		}
		raw, err := os.ReadFile(f)
		if err == nil && len(raw) == 0 {
			err = ErrEmptyFile
		}
		if !send(source{name: f, raw: raw, err: err, countsFile: true}) {
			return
		}
	}
}

// ErrEmptyFile is the import failure of a file of zero bytes (a message or an mbox).
var ErrEmptyFile = errors.New("empty file")

// maxMessage bounds one message read from an mbox (a variable for the tests).
var maxMessage int64 = 256 << 20

// An mbox's messages are imported oldest first, by their Date header, whatever their order
// in the file: a batch then holds messages of a few days, whose rows go to a few places of
// each index ordered by date (MariaDB's search_term: a word's messages newest first; the
// date indexes of metadata) instead of one place per message. A message without a usable
// Date header goes last: its date is its arrival. The file is read twice: once for the
// messages' places and dates, then each message where it lies. At most mboxSortRun messages
// are ordered at a time (mboxEntry is 32 bytes), so an mbox of any size costs bounded
// memory; the messages keep their numbers in the file ("box.mbox#3").
var mboxSortRun = 1 << 20

// mboxEntry is one message of an mbox.
type mboxEntry struct {
	start, end int64 // its bytes in the file: after its "From " line, up to the next one
	n          int   // its number in the file, from 1
	date       int64 // Unix seconds of its Date header; math.MaxInt64 when it has none
}

// maxDateHeader bounds the header bytes read for a message's date when ordering an mbox.
const maxDateHeader = 1 << 20

// readMbox sends an mbox's messages (mboxrd: ">From " lines are unquoted; the "From "
// separator line is not part of a message), oldest first in runs of mboxSortRun.
func readMbox(ctx context.Context, path string, send func(source) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var run []mboxEntry
	first := true
	sendRun := func() bool {
		slices.SortStableFunc(run, func(a, b mboxEntry) int { return cmp.Compare(a.date, b.date) })
		for _, e := range run {
			raw, err := readMboxMessage(f, e)
			if !send(source{name: fmt.Sprintf("%s#%d", path, e.n), raw: raw, err: err, countsFile: first}) {
				return false
			}
			first = false
		}
		run = run[:0]
		return true
	}
	err = scanMbox(ctx, f, func(e mboxEntry) bool {
		run = append(run, e)
		return len(run) < mboxSortRun || sendRun()
	})
	if !sendRun() {
		return ctx.Err()
	}
	return err
}

// scanMbox reads an mbox from its start and calls each with every message's place and date,
// until each returns false (then it returns ctx.Err()).
func scanMbox(ctx context.Context, f io.Reader, each func(mboxEntry) bool) error {
	r := bufio.NewReaderSize(f, 1<<20)
	var header bytes.Buffer // the current message's header lines, unquoted
	var cur mboxEntry
	var off int64
	started, inHeader, empty := false, false, true
	flush := func(end int64) bool {
		if !started {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		cur.end, cur.date = end, mboxDate(header.Bytes())
		return each(cur)
	}
	for {
		line, err := r.ReadSlice('\n')
		size := int64(len(line))
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: its first maxDateHeader bytes are kept (a
			// "From " line or a header field is known by them), the rest only counted.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				size += int64(len(line))
				long = append(long, line[:min(len(line), max(maxDateHeader-len(long), 0))]...)
			}
			line = long
		}
		if size > 0 {
			empty = false
			switch {
			case bytes.HasPrefix(line, []byte("From ")):
				if !flush(off) {
					return ctx.Err()
				}
				started, inHeader = true, true
				cur = mboxEntry{start: off + size, n: cur.n + 1}
				header.Reset()
			case started:
				if off+size-cur.start > maxMessage {
					return fmt.Errorf("message %d is larger than %d bytes", cur.n, maxMessage)
				}
				if inHeader && len(bytes.TrimRight(line, "\r\n")) == 0 {
					inHeader = false
				} else if inHeader && header.Len()+len(line) <= maxDateHeader {
					header.Write(unquoteFrom(line))
				}
			}
			off += size
		}
		if errors.Is(err, io.EOF) {
			if empty {
				return ErrEmptyFile
			}
			if !started {
				return errors.New("not an mbox file: no \"From \" line")
			}
			flush(off)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// mboxDate is the Unix time of the first Date field of header (as the parser reads it:
// parseDate), math.MaxInt64 when there is none or it is unusable.
func mboxDate(header []byte) int64 {
	for _, f := range headerFields(header) {
		if strings.EqualFold(strings.TrimSpace(f.Name), "Date") {
			if d, _, ok := parseDate(unfold(f.Value)); ok {
				return d.Unix()
			}
			break
		}
	}
	return math.MaxInt64
}

// readMboxMessage reads e's bytes from f, ">From " lines unquoted and without the line
// break that ends the last line before the next "From " line (the message's own last line
// break stays).
func readMboxMessage(f io.ReaderAt, e mboxEntry) ([]byte, error) {
	b := make([]byte, e.end-e.start)
	if n, err := f.ReadAt(b, e.start); n < len(b) {
		return nil, err
	}
	out := b[:0] // unquoting only takes bytes away: it is done in place
	for rest := b; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n') + 1
		if i == 0 {
			i = len(rest)
		}
		out = append(out, unquoteFrom(rest[:i])...)
		rest = rest[i:]
	}
	return bytes.TrimSuffix(out, []byte("\n")), nil
}

// unquoteFrom turns mboxrd's ">From ", ">>From " … back into one '>' less.
func unquoteFrom(line []byte) []byte {
	i := 0
	for i < len(line) && line[i] == '>' {
		i++
	}
	if i > 0 && bytes.HasPrefix(line[i:], []byte("From ")) {
		return line[1:]
	}
	return line
}
