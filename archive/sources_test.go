package archive

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/semaphore"
)

// mboxCase is one message of a test mbox: its Date field ("" for none) and a body line that
// names it.
type mboxCase struct {
	date, name string
}

// writeMbox writes cases as an mboxrd file (a body line "From x" quoted as ">From x") and
// returns its path and each message as it must be read back.
func writeMbox(t *testing.T, crlf bool, cases []mboxCase) (string, []string) {
	t.Helper()
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	var file strings.Builder
	want := make([]string, len(cases))
	for i, c := range cases {
		var m strings.Builder
		m.WriteString("Received: from relay.example by mx.example; Mon, 1 Jan 2001 00:00:00 +0000" + nl)
		if c.date != "" {
			m.WriteString("Date: " + c.date + nl)
		}
		m.WriteString("From: a@example.com" + nl + "Subject: " + c.name + nl + nl)
		m.WriteString("body of " + c.name + nl + "From the mbox's point of view" + nl + "last line" + nl)
		want[i] = m.String()
		fmt.Fprintf(&file, "From a@example.com Mon Jan  1 00:00:00 2001%s%s%s", nl,
			strings.Replace(m.String(), nl+"From the", nl+">From the", 1), nl)
	}
	path := filepath.Join(t.TempDir(), "box.mbox")
	require.NoError(t, os.WriteFile(path, []byte(file.String()), 0o600))
	return path, want
}

// readAll runs readSources over files and returns what it sent.
func readAll(t *testing.T, files ...string) []source {
	t.Helper()
	out := make(chan source, 1)
	go readSources(context.Background(), files, out, semaphore.NewWeighted(1<<30), func(n int) int64 { return int64(max(n, 1)) })
	var got []source
	for s := range out {
		got = append(got, s)
	}
	return got
}

// TestReadMboxOldestFirst: an mbox's messages come oldest first by their Date header
// (obsolete zones and comments as the parser reads them; a message without a usable date
// last, in file order), each byte-identical to what it would be read in file order, named
// by its number in the file; only the first one sent counts the file.
func TestReadMboxOldestFirst(t *testing.T) {
	cases := []mboxCase{
		{"Wed, 03 Mar 2021 10:00:00 +0000", "march"},
		{"", "undated"},
		{"Tue, 02 Feb 2021 10:00:00 EST", "february"}, // 15:00 UTC
		{"2 Feb 2021 14:00:00 -0000 (a comment)", "february-earlier"},
		{"not a date at all", "unusable"},
		{"Fri, 01 Jan 2021 10:00:00 +0100", "january"},
	}
	for _, crlf := range []bool{false, true} {
		path, want := writeMbox(t, crlf, cases)
		got := readAll(t, path)
		require.Len(t, got, len(cases))
		order := []int{5, 3, 2, 0, 1, 4}
		for i, k := range order {
			assert.NoError(t, got[i].err)
			assert.Equal(t, fmt.Sprintf("%s#%d", path, k+1), got[i].name, "crlf %v: place %d", crlf, i)
			w := want[k]
			if crlf {
				// Only the separator's "\n" is taken off, as always: its "\r" stays, and a
				// CRLF mbox imported again is found a duplicate.
				w += "\r"
			}
			assert.Equal(t, w, string(got[i].raw), "crlf %v: %s read back whole, >From unquoted", crlf, cases[k].name)
			assert.Equal(t, i == 0, got[i].countsFile)
		}
	}
}

// TestReadMboxRuns: at most mboxSortRun messages are ordered at a time; each run comes
// oldest first, the runs in file order.
func TestReadMboxRuns(t *testing.T) {
	defer func(n int) { mboxSortRun = n }(mboxSortRun)
	mboxSortRun = 2
	path, _ := writeMbox(t, false, []mboxCase{
		{"Sat, 02 Jan 2021 00:00:00 +0000", "b"}, {"Fri, 01 Jan 2021 00:00:00 +0000", "a"},
		{"Mon, 04 Jan 2021 00:00:00 +0000", "d"}, {"Sun, 03 Jan 2021 00:00:00 +0000", "c"},
		{"Tue, 05 Jan 2021 00:00:00 +0000", "e"},
	})
	var names []string
	for _, s := range readAll(t, path) {
		names = append(names, strings.TrimPrefix(s.name, path))
	}
	assert.Equal(t, []string{"#2", "#1", "#4", "#3", "#5"}, names)
}

// TestReadMboxBroken: what is not an mbox fails as one import failure; a message past
// the size bound fails after the messages before it were sent; a header line longer than
// the reader's buffer neither breaks the date nor the message.
func TestReadMboxBroken(t *testing.T) {
	dir := t.TempDir()
	empty, notMbox := filepath.Join(dir, "empty.mbox"), filepath.Join(dir, "plain.mbox")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	require.NoError(t, os.WriteFile(notMbox, []byte("Subject: hi\n\nno From line\n"), 0o600))
	for _, f := range []string{empty, notMbox} {
		got := readAll(t, f)
		require.Len(t, got, 1)
		assert.Error(t, got[0].err, f)
	}

	long := "X-Long: " + strings.Repeat("x", 3<<20) + "\n"
	path := filepath.Join(dir, "long.mbox")
	body := "From a Mon Jan  1 00:00:00 2001\n" + long + "Date: Sat, 02 Jan 2021 00:00:00 +0000\nSubject: late\n\nbody\n\n" +
		"From a Mon Jan  1 00:00:00 2001\nDate: Fri, 01 Jan 2021 00:00:00 +0000\nSubject: early\n\nbody\n"
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	got := readAll(t, path)
	require.Len(t, got, 2)
	assert.Equal(t, path+"#2", got[0].name, "the date under a line past maxDateHeader is not read: the message goes last")
	assert.Equal(t, path+"#1", got[1].name)
	assert.Equal(t, long+"Date: Sat, 02 Jan 2021 00:00:00 +0000\nSubject: late\n\nbody\n", string(got[1].raw))

	defer func(n int64) { maxMessage = n }(maxMessage)
	maxMessage = 1 << 10
	big := filepath.Join(dir, "big.mbox")
	require.NoError(t, os.WriteFile(big, []byte("From a Mon Jan  1 00:00:00 2001\nDate: Sat, 02 Jan 2021 00:00:00 +0000\n\nsmall\n\n"+
		"From a Mon Jan  1 00:00:00 2001\nSubject: big\n\n"+strings.Repeat("y", 2<<10)+"\n"), 0o600))
	got = readAll(t, big)
	require.Len(t, got, 2)
	assert.Equal(t, big+"#1", got[0].name)
	assert.NoError(t, got[0].err)
	assert.Equal(t, big, got[1].name)
	assert.ErrorContains(t, got[1].err, "message 2 is larger than 1024 bytes")
}

// TestMboxDate: the date read for ordering is the parser's (parseDate) of the first Date
// field, folded or not; none, or an unusable one, is math.MaxInt64.
func TestMboxDate(t *testing.T) {
	assert.Equal(t, int64(1609459200), mboxDate([]byte("Subject: x\r\nDate: Fri, 01 Jan 2021\r\n 00:00:00 GMT\r\n")))
	assert.Equal(t, int64(1609459200), mboxDate([]byte("date : Fri, 01 Jan 2021 00:00:00 +0000\nDate: Sat, 02 Jan 2021 00:00:00 +0000\n")))
	assert.Equal(t, int64(math.MaxInt64), mboxDate([]byte("Subject: x\n")))
	assert.Equal(t, int64(math.MaxInt64), mboxDate([]byte("Date: yesterday\n")))
}

// TestReadMboxSameBytes: over random mboxes (LF and CRLF lines, quoted and unquoted
// "From " lines at any depth, lines longer than the reader's buffer, empty messages), every
// message reads back as reading the file front to back gives it (refMbox), each once.
func TestReadMboxSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"Subject: x", "", ">From quoted", ">>From twice", "From me", "plain", "Date: Mon, 1 Jan 2001 00:00:00 +0000",
		"Date: Sun, 31 Dec 2000 23:00:00 -0500", strings.Repeat("z", 1<<20+17), "trailing space ", "\r"}
	for round := range 30 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString("From sender Mon Jan  1 00:00:00 2001\n")
			for range rng.IntN(12) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
				if rng.IntN(4) == 0 {
					b.WriteString("\r")
				}
				b.WriteString("\n")
			}
		}
		content := b.String()
		if rng.IntN(3) == 0 {
			content = strings.TrimSuffix(content, "\n") // no final line break
		}
		path := filepath.Join(t.TempDir(), "r.mbox")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		want := refMbox(content)
		got := map[string]string{}
		for _, s := range readAll(t, path) {
			require.NoError(t, s.err)
			got[strings.TrimPrefix(s.name, path+"#")] = string(s.raw)
		}
		require.Len(t, got, len(want), "round %d", round)
		for i, w := range want {
			assert.Equal(t, w, got[strconv.Itoa(i+1)], "round %d, message %d", round, i+1)
		}
	}
}

// refMbox reads an mbox front to back: a message is the lines after a "From " line up to
// the next, ">From " lines unquoted once, without the last line break.
func refMbox(content string) []string {
	var out []string
	var cur *strings.Builder
	end := func() {
		if cur != nil {
			out = append(out, strings.TrimSuffix(cur.String(), "\n"))
		}
	}
	for _, line := range strings.SplitAfter(content, "\n") {
		if strings.HasPrefix(line, "From ") {
			end()
			cur = &strings.Builder{}
			continue
		}
		if cur != nil {
			if q := strings.TrimLeft(line, ">"); len(q) < len(line) && strings.HasPrefix(q, "From ") {
				line = line[1:]
			}
			cur.WriteString(line)
		}
	}
	end()
	return out
}
