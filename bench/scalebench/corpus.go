package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// corpus is the generated mail cut into steps: step k (from 0) is messages k*step to
// (k+1)*step-1, written once as one mbox file that every database imports, with the
// oracle's counts as they stand after it.
type corpus struct {
	g     *generator
	ws    *wordSet
	dir   string
	step  int
	total int
	steps []stepFile // written so far
	live  *counts
}

// stepFile is the mbox of one step.
type stepFile struct {
	path     string
	from, to int // messages from to to-1
	bytes    int64
	oracle   *counts // after this step
}

func newCorpus(g *generator, ws *wordSet, dir string, step, total int) *corpus {
	return &corpus{g: g, ws: ws, dir: dir, step: step, total: total, live: newCounts(ws)}
}

// stepCount is the number of steps: the last one may be shorter.
func (c *corpus) stepCount() int { return (c.total + c.step - 1) / c.step }

// file returns step k's mbox, writing it (and those before it) first when needed, and
// the time this call spent writing.
func (c *corpus) file(k int) (stepFile, time.Duration, error) {
	start := time.Now()
	for len(c.steps) <= k {
		from := len(c.steps) * c.step
		f := stepFile{path: filepath.Join(c.dir, fmt.Sprintf("step-%03d.mbox", len(c.steps)+1)), from: from, to: min(from+c.step, c.total)}
		n, err := c.write(f)
		if err != nil {
			return f, 0, fmt.Errorf("write %s: %w", f.path, err)
		}
		f.bytes, f.oracle = n, c.live.clone()
		c.steps = append(c.steps, f)
	}
	return c.steps[k], time.Since(start), nil
}

// write generates the messages of f into its mbox (mboxrd), counting them in the oracle,
// and fsyncs the file so that no write-back of it runs during the import. It returns the
// bytes of the messages.
func (c *corpus) write(f stepFile) (int64, error) {
	out, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	var n int64
	for i := f.from; i < f.to; i++ {
		m := c.g.message(i)
		c.live.add(c.g, c.ws, m)
		n += int64(len(m.raw))
		fmt.Fprintf(w, "From scalebench@generated %s\n", m.sent.UTC().Format("Mon Jan _2 15:04:05 2006"))
		writeQuoted(w, m.raw)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return 0, err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return 0, err
	}
	return n, out.Close()
}

// writeQuoted writes raw with mboxrd quoting: a '>' before every line that reads
// ">*From ".
func writeQuoted(w *bufio.Writer, raw []byte) {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line = raw[:i+1]
		}
		if bytes.HasPrefix(bytes.TrimLeft(line, ">"), []byte("From ")) {
			w.WriteByte('>')
		}
		w.Write(line)
		raw = raw[len(line):]
	}
}

// remove deletes the mbox files.
func (c *corpus) remove() {
	for _, f := range c.steps {
		os.Remove(f.path)
	}
}
