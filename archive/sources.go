package archive

import (
	"golang.org/x/sync/semaphore"

	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// maxMessage bounds one message read from an mbox.
const maxMessage = 256 << 20

// readMbox splits an mbox (mboxrd: ">From " lines are unquoted) into messages; the
// "From " separator line is not part of a message.
func readMbox(ctx context.Context, path string, send func(source) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var cur bytes.Buffer
	n, started, empty := 0, false, true
	flush := func() bool {
		if !started {
			return true
		}
		n++
		msg := bytes.TrimSuffix(cur.Bytes(), []byte("\n"))
		ok := send(source{name: fmt.Sprintf("%s#%d", path, n), raw: append([]byte(nil), msg...), countsFile: n == 1})
		cur.Reset()
		return ok
	}
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			empty = false
			if bytes.HasPrefix(line, []byte("From ")) {
				if !flush() {
					return ctx.Err()
				}
				started = true
			} else if started {
				cur.Write(unquoteFrom(line))
				if cur.Len() > maxMessage {
					return fmt.Errorf("message %d is larger than %d bytes", n+1, maxMessage)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			if empty {
				return ErrEmptyFile
			}
			if !started {
				return errors.New("not an mbox file: no \"From \" line")
			}
			flush()
			return nil
		}
		if err != nil {
			return err
		}
	}
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
