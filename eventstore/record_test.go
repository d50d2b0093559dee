package eventstore_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/eventstore"
)

// TestCanonicalBytesGolden pins the hashed form of one record: a change here changes
// every leaf hash of every ledger.
func TestCanonicalBytesGolden(t *testing.T) {
	rec := eventstore.Record{
		Position: 42, StreamID: "erasure-GDPR-2026-00001", StreamType: "erasure_request", StreamVersion: 3,
		TenantID: "acme", EventType: "erasure.request_approved", SchemaVersion: 1,
		Payload: []byte(`{"approver":"dpo"}`), Metadata: []byte(`{"actor":"dpo"}`),
		RecordedAt: time.Date(2026, 3, 1, 11, 30, 0, 123456789, time.FixedZone("CET", 3600)),
	}
	want := `{"event_type":"erasure.request_approved","metadata":{"actor":"dpo"},"payload":{"approver":"dpo"},` +
		`"position":42,"recorded_at":"2026-03-01T10:30:00.123456Z","schema_version":1,` +
		`"stream_id":"erasure-GDPR-2026-00001","stream_type":"erasure_request","stream_version":3,"tenant_id":"acme"}`
	assert.Equal(t, want, string(rec.CanonicalBytes()))
}

// TestCanonicalBytesMatchesJCS compares the hand-written serialiser with gowebpki/jcs on
// random records full of characters that JSON encoders treat differently.
func TestCanonicalBytesMatchesJCS(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 8785))
	for i := range 3000 {
		rec := randomRecord(t, r)
		got := rec.CanonicalBytes()
		want := jcsOf(t, &rec)
		require.Equal(t, string(want), string(got), "record %d: %+q", i, rec.StreamID)
		checkHashes(t, &rec, got)
	}
}

// FuzzCanonicalBytes compares CanonicalBytes with gowebpki/jcs for arbitrary text fields.
func FuzzCanonicalBytes(f *testing.F) {
	for _, seed := range []string{"", "plain", "\x00\x1f\x7f", `"\/`, "\u2028\u2029", "😀é中", "<>&'", "\ufeff\ufffd"} {
		f.Add(seed, "type."+seed, seed+"tenant")
	}
	f.Fuzz(func(t *testing.T, id, typ, tenant string) {
		if !utf8.ValidString(id) || !utf8.ValidString(typ) || !utf8.ValidString(tenant) {
			t.Skip("the store rejects invalid UTF-8")
		}
		rec := eventstore.Record{Position: 1, StreamID: id, StreamType: "s", StreamVersion: 1, TenantID: tenant,
			EventType: typ, SchemaVersion: 1, Payload: []byte(`{}`), Metadata: []byte(`{}`), RecordedAt: time.Unix(0, 0)}
		if got, want := rec.CanonicalBytes(), jcsOf(t, &rec); string(got) != string(want) {
			t.Fatalf("got %q; want %q", got, want)
		}
	})
}

// jcsOf is the record's hashed fields marshalled generically and canonicalised by jcs,
// with recorded_at formatted independently of the store.
func jcsOf(t *testing.T, rec *eventstore.Record) []byte {
	t.Helper()
	at := rec.RecordedAt.UTC()
	generic := map[string]any{
		"event_type": rec.EventType, "metadata": json.RawMessage(rec.Metadata), "payload": json.RawMessage(rec.Payload),
		"position": rec.Position, "schema_version": rec.SchemaVersion, "stream_id": rec.StreamID,
		"stream_type": rec.StreamType, "stream_version": rec.StreamVersion, "tenant_id": rec.TenantID,
		"recorded_at": fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", at.Year(), at.Month(), at.Day(),
			at.Hour(), at.Minute(), at.Second(), at.Nanosecond()/1000),
	}
	raw, err := json.Marshal(generic)
	require.NoError(t, err)
	out, err := jcs.Transform(raw)
	require.NoError(t, err)
	return out
}

// checkHashes checks leaf = RFC 6962 HashLeaf = SHA-256(0x00 ‖ canonical) and the chain step.
func checkHashes(t *testing.T, rec *eventstore.Record, canonical []byte) {
	t.Helper()
	leaf := rec.ComputeLeafHash()
	require.Equal(t, rfc6962.DefaultHasher.HashLeaf(canonical), leaf[:], "leaf hash; want rfc6962 HashLeaf")
	require.Equal(t, sha256.Sum256(append([]byte{0}, canonical...)), [32]byte(leaf), "leaf hash; want SHA-256(0x00 ‖ bytes)")
	prev := eventstore.Hash(sha256.Sum256(canonical))
	require.Equal(t, sha256.Sum256(append(prev[:], leaf[:]...)), [32]byte(eventstore.NextChainHash(prev, leaf)), "chain hash")
}

// awkward are characters that JSON encoders escape in different ways, or not at all.
var awkward = []string{
	"\x00", "\x01", "\b", "\t", "\n", "\v", "\f", "\r", "\x1b", "\x1f", "\x7f", `"`, `\`, "/", "'",
	"<", ">", "&", "é", "ß", "中文", "\u0080", "\u00a0", "\u2028", "\u2029", "\ufeff", "\ufffd",
	"😀", "👩‍👩‍👧", "\U0010ffff", " ", "a", "Z", "0", "\\u0041",
}

// randomText returns up to 15 pieces of awkward characters and random code points.
func randomText(r *rand.Rand, nonEmpty bool) string {
	var b strings.Builder
	n := r.IntN(16)
	if nonEmpty {
		n++
	}
	for range n {
		if r.IntN(3) > 0 {
			b.WriteString(awkward[r.IntN(len(awkward))])
			continue
		}
		c := rune(r.IntN(utf8.MaxRune + 1))
		if c >= 0xd800 && c <= 0xdfff {
			c = 'x'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// randomValue returns a random JSON value of at most depth levels of nesting.
func randomValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(8); {
	case k == 0 && depth > 0:
		return randomObject(r, depth-1)
	case k == 1 && depth > 0:
		return []any{randomValue(r, depth-1), randomValue(r, depth-1)}
	case k == 2:
		return r.Int64N(1<<53) - 1<<52
	case k == 3:
		return r.NormFloat64() * float64(r.IntN(1e9))
	case k == 4:
		return r.IntN(2) == 0
	case k == 5:
		return nil
	default:
		return randomText(r, false)
	}
}

func randomObject(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range r.IntN(5) {
		m[randomText(r, false)] = randomValue(r, depth)
	}
	return m
}

func randomRecord(t *testing.T, r *rand.Rand) eventstore.Record {
	t.Helper()
	payload, err := eventstore.CanonicalJSON(randomObject(r, 3))
	require.NoError(t, err)
	md, err := eventstore.CanonicalJSON(domain.Metadata{Actor: randomText(r, false), ClientIP: "2001:db8::1",
		UserAgent: randomText(r, false), CorrelationID: randomText(r, false)})
	require.NoError(t, err)
	zone := time.FixedZone("z", (r.IntN(27)-12)*3600)
	return eventstore.Record{
		Position: 1 + r.Int64N(1<<53-1), StreamID: randomText(r, true), StreamType: randomText(r, true),
		StreamVersion: 1 + r.Int64N(1<<53-1), TenantID: randomText(r, true), EventType: randomText(r, true),
		SchemaVersion: 1 + r.IntN(1000), Payload: payload, Metadata: md,
		RecordedAt: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zone),
	}
}

// TestParseHash checks the hex form of hashes both ways.
func TestParseHash(t *testing.T) {
	h := eventstore.Hash(sha256.Sum256([]byte("x")))
	got, err := eventstore.ParseHash(h.String())
	require.NoError(t, err)
	assert.Equal(t, h, got)
	for _, bad := range []string{"", "zz", h.String()[:62], h.String() + "00", strings.ToUpper(h.String())[:63] + "g"} {
		_, err := eventstore.ParseHash(bad)
		assert.Error(t, err, "ParseHash(%q)", bad)
	}
}
