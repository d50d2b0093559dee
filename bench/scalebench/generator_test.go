package main

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

// testGenerator is built once: the vocabulary takes a moment.
var testGenerator = sync.OnceValue(newGenerator)

func TestGeneratorIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := testGenerator(), newGenerator()
	require.Equal(t, a.words, b.words, "the vocabulary")
	require.Equal(t, a.addrs, b.addrs, "the address pool")
	for _, i := range []int{0, 1, 77, 4096, 999_999} {
		assert.Equal(t, a.message(i).raw, b.message(i).raw, "message %d on two generators", i)
		assert.Equal(t, a.message(i).raw, a.message(i).raw, "message %d twice", i)
	}
	assert.NotEqual(t, a.message(1).raw, a.message(2).raw)
}

// TestGeneratorHasThePromisedShape checks the skew of the addresses (the heaviest in
// about a fifth of the messages, most addresses rare), the size of the messages and their
// variety.
func TestGeneratorHasThePromisedShape(t *testing.T) {
	t.Parallel()
	g := testGenerator()
	const n = 5000
	part := make([]int, addressCount)
	var size, multipart, attached, accented, named int
	for i := range n {
		m := g.message(i)
		for _, k := range append(m.rcpts(), m.sender) {
			part[k]++
		}
		size += len(m.raw)
		if m.shape != shapePlain {
			multipart++
		}
		attached += m.attachments()
		if bytes.ContainsAny(m.raw, "éèüöñçåøł") {
			accented++
		}
		if bytes.Contains(m.raw, []byte("=?utf-8?q?")) || bytes.Contains(m.raw, []byte("> ")) {
			named++
		}
	}
	heaviest := float64(part[0]) / n
	assert.InDelta(t, 0.20, heaviest, 0.03, "share of the messages the heaviest address takes part in")
	assert.Equal(t, part[0], slices.Max(part), "address 0 is the heaviest")
	sorted := slices.Clone(part)
	slices.Sort(sorted)
	assert.Less(t, float64(sorted[addressCount/2])/n, 0.001, "the median address is in less than 0.1% of the messages")
	assert.InDelta(t, 2500, size/n, 300, "mean message size")
	assert.InDelta(t, 0.22, float64(multipart)/n, 0.03, "multipart share")
	assert.InDelta(t, 0.12, float64(attached)/n, 0.02, "attachment share")
	assert.Greater(t, accented, n/2, "most messages hold an accented word")
	assert.Positive(t, named)
}

// TestVocabularyWordsAreOnlyWhereRecorded checks the premise of the oracle: a vocabulary
// word appears in what the archive indexes (subject, addresses, text, attachment names)
// only where the generator recorded it, and the queried words are plain lower-case ASCII.
func TestVocabularyWordsAreOnlyWhereRecorded(t *testing.T) {
	t.Parallel()
	g := testGenerator()
	rank := make(map[string]int32, len(g.words))
	for r, w := range g.words {
		rank[w] = int32(r)
	}
	for w := range reservedTokens(g.addrs) {
		_, clash := rank[w]
		require.False(t, clash, "reserved token %q is a vocabulary word", w)
	}
	parser := archive.NewParser("")
	for i := range 300 {
		m := g.message(i)
		p, err := parser.Parse(m.raw)
		require.NoError(t, err, "message %d", i)
		names := ""
		for _, a := range p.Attachments {
			names += " " + a.Name
		}
		indexed := strings.Join(slices.Concat([]string{p.Subject, p.From, p.Text, names}, p.To, p.Cc), " ")
		for _, tok := range tokens(indexed) {
			if r, ok := rank[tok]; ok {
				require.True(t, m.hasWord(r), "message %d: %q indexed but not recorded", i, tok)
			}
		}
		for _, r := range m.words {
			assert.Contains(t, foldAccents(indexed), g.words[r], "message %d: recorded word not indexed", i)
		}
	}
	for _, w := range newWordSet().all() {
		assert.Regexp(t, `^[a-z]+$`, g.words[w])
	}
}

// TestMessagesParseAsGenerated checks what the archive's parser reads of the messages:
// sender, recipients, date, Message-ID and attachments as the generator made them.
func TestMessagesParseAsGenerated(t *testing.T) {
	t.Parallel()
	g := testGenerator()
	parser := archive.NewParser("")
	for i := range 200 {
		m := g.message(i)
		p, err := parser.Parse(m.raw)
		require.NoError(t, err, "message %d", i)
		assert.Equal(t, g.addrs[m.sender].addr, p.From)
		assert.Len(t, p.To, len(m.to))
		assert.Len(t, p.Cc, len(m.cc))
		assert.True(t, p.Sent.Equal(m.sent), "message %d: sent %s; want %s", i, p.Sent, m.sent)
		assert.Len(t, p.Attachments, m.attachments(), "message %d", i)
		got, ok := messageIndex(p.MessageID)
		assert.True(t, ok && got == i, "message %d: Message-ID %q", i, p.MessageID)
	}
}

func TestWriteQuotedEscapesFromLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	writeQuoted(w, []byte("Subject: x\r\n\r\nFrom here\r\n>From there\r\nFrom: not at the start\r\nlast"))
	require.NoError(t, w.Flush())
	assert.Equal(t, "Subject: x\r\n\r\n>From here\r\n>>From there\r\nFrom: not at the start\r\nlast", b.String())
}

// TestGeneratorInDateOrder: with inOrder, message i is dated in the i-th slot of the five
// years, so the messages come in date order over the whole span, and is otherwise the
// message the random dating makes.
func TestGeneratorInDateOrder(t *testing.T) {
	t.Parallel()
	random := testGenerator()
	ordered := *random // the shared generator's copy, dated in order
	const n = 2000
	ordered.inOrder = n
	var prev time.Time
	for i := range n {
		m, r := ordered.message(i), random.message(i)
		assert.False(t, m.sent.Before(prev), "message %d dated before message %d", i, i-1)
		prev = m.sent
		span := time.Duration(archiveDays*86400) * time.Second
		slotStart, slotEnd := archiveStart.Add(span/n*time.Duration(i)), archiveStart.Add(span/n*time.Duration(i+1))
		assert.True(t, !m.sent.Before(slotStart) && m.sent.Before(slotEnd), "message %d at %s, in its slot from %s", i, m.sent, slotStart)
		assert.Equal(t, r.sender, m.sender)
		assert.Equal(t, r.words, m.words)
		assert.Equal(t, r.rcpts(), m.rcpts())
	}
	assert.Equal(t, archiveDays-1, ordered.message(n-1).day(), "the last message in the last day")
}
