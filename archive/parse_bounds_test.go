package archive_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// allocBound is what a parse may allocate for raw: 64 bytes a byte (the decoded copies of
// its parts, headers, addresses, the text) and 8 KiB a part read (enmime.ReadHeader's
// reader of 4 KiB, the part's structs); linear in the size, whatever the nesting. Twice
// that under the race detector.
func allocBound(raw []byte) uint64 {
	parts := min(strings.Count(string(raw), "\r\n--"), archive.MaxParts)
	bound := uint64(64*len(raw) + 8<<10*parts)
	if raceEnabled {
		bound *= 2
	}
	return bound
}

// TestParseBounds: a hostile message is parsed within the bounds, in memory linear in its
// size, with a note when parts were left out, and the text of the parts read.
func TestParseBounds(t *testing.T) {
	cases := []struct {
		name     string
		raw      []byte
		note     string   // "" for none
		text     []string // in the text
		notText  []string // left out
		attCount int
	}{
		{"50,000 nested multiparts", archivetest.DeepMessage(50000), fmt.Sprintf("nested more than %d deep", archive.MaxPartDepth),
			[]string{"level 0", fmt.Sprintf("level %d", archive.MaxPartDepth-1)}, []string{fmt.Sprintf("level %d\n", archive.MaxPartDepth+1), "bottom"}, 0},
		{"nesting at the limit", archivetest.DeepMessage(archive.MaxPartDepth - 1), "", []string{"level 0", "bottom"}, nil, 0},
		{"20,000 attachments", archivetest.WideMessage(20000), fmt.Sprintf("more than %d MIME parts", archive.MaxParts),
			[]string{"the body"}, nil, archive.MaxParts - 1},
		{"attachments at the limit", archivetest.WideMessage(archive.MaxParts - 1), "", []string{"the body"}, nil, archive.MaxParts - 1},
		{"100,000 recipients", archivetest.ManyRecipients(100000), "", []string{"hello crowd"}, nil, 0},
		{"huge header", archivetest.HugeHeader(30000), "", []string{"body after a huge header"}, nil, 0},
	}
	p := archive.NewParser("")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, split := range []bool{true, false} {
				var m *archive.Parsed
				var err error
				alloc := allocated(func() { m, _, err = p.ParseVia(c.raw, split) })
				require.NoError(t, err, "split %v", split)
				assert.LessOrEqual(t, alloc, allocBound(c.raw), "split %v: got %d bytes allocated for %d", split, alloc, len(c.raw))
				if c.note == "" {
					assert.Empty(t, m.ParseNote, "split %v", split)
				} else {
					assert.Contains(t, m.ParseNote, c.note, "split %v", split)
				}
				text := strings.ReplaceAll(m.Text, "\r\n", "\n") + "\n"
				for _, s := range c.text {
					assert.Contains(t, text, s, "split %v", split)
				}
				for _, s := range c.notText {
					assert.NotContains(t, text, s, "split %v", split)
				}
				assert.Len(t, m.Attachments, c.attCount, "split %v", split)
			}
		})
	}
}

// TestParseRecipientsDistinct: 100,000 recipients are kept, each once, in order.
func TestParseRecipientsDistinct(t *testing.T) {
	raw := archivetest.ManyRecipients(100000)
	raw = append([]byte("Cc: USER7@crowd.test, user7@crowd.test\r\n"), raw...)
	m, err := archive.NewParser("").Parse(raw)
	require.NoError(t, err)
	require.Len(t, m.To, 100000)
	assert.Equal(t, "user0@crowd.test", m.To[0])
	assert.Equal(t, "user99999@crowd.test", m.To[99999])
	assert.Equal(t, []string{"user7@crowd.test"}, m.Cc)
}

// TestParseBoundsLenient: a deep message that the splitter declines (an unclosed boundary
// inside) is not handed to enmime, whose cost grows with depth times size: the splitter
// reads it leniently, up to where it would decline, with a note.
func TestParseBoundsLenient(t *testing.T) {
	raw := archivetest.DeepMessage(50000)
	// Close no boundary at all: the splitter declines ("boundary not closed").
	raw = raw[:strings.Index(string(raw), "bottom")+len("bottom\r\n")]
	p := archive.NewParser("")
	var m *archive.Parsed
	var err error
	alloc := allocated(func() { m, _, err = p.ParseVia(raw, true) })
	require.NoError(t, err)
	assert.LessOrEqual(t, alloc, allocBound(raw), "got %d bytes allocated for %d", alloc, len(raw))
	assert.NotEmpty(t, m.ParseNote)
	assert.Contains(t, m.Text, "level 0")
}
