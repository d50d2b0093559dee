package analyzer

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkMailboxes asserts what holds for every mailbox ParseList returns, whatever
// the input: the key is valid UTF-8 without control characters, bounded, its own
// normal form, and has a domain.
func checkMailboxes(t *testing.T, raw string, ms []Mailbox) {
	t.Helper()
	for _, m := range ms {
		if !utf8.ValidString(m.Key) || !utf8.ValidString(m.Name) || !utf8.ValidString(m.Written) {
			t.Fatalf("ParseList(%q): invalid UTF-8 in %+v", raw, m)
		}
		if strings.ContainsFunc(m.Key, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			t.Fatalf("ParseList(%q): control character in key %q", raw, m.Key)
		}
		if len(m.Key) > MaxKeyBytes {
			t.Fatalf("ParseList(%q): key of %d bytes", raw, len(m.Key))
		}
		if DomainOf(m.Key) == "" {
			t.Fatalf("ParseList(%q): key %q has no domain", raw, m.Key)
		}
		key, err := Normalize(m.Key)
		if err != nil || key != m.Key {
			t.Fatalf("ParseList(%q): Normalize(%q) = %q, %v; want the key itself", raw, m.Key, key, err)
		}
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{
		"John Doe <jdoe@machine.example>",
		`"Giant; \"Big\" Box" <sysservices@example.net>`,
		"A Group(Some people)\r\n :Chris Jones <c@(Chris's host.)public.example>, joe@example.org;",
		"Mary Smith <@node.test,@x:mary@example.net>, , jdoe@test  . example",
		`"xxxxx@xxxxx" <matmail>`,
		"=?utf-8?q?J=C3=B6hn?= <j@bücher.example>",
		"(((", `"`, "<<<>", "a@[1.2", "=?x?q?", "a@b＠c.example", "\xff@\xfe.example",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkMailboxes(t, raw, ParseList(raw))
		if key, err := Normalize(raw); err == nil {
			again, err := Normalize(key)
			if err != nil || again != key {
				t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q, %v", raw, key, key, again, err)
			}
		}
	})
}

// TestParseListLinear parses 1 MB headers built to defeat a naive parser (nested or
// unclosed comments, quotes, brackets and encoded words, long dot chains) and a
// 100,000-address header; each must finish in far less time than a quadratic parse
// (hours at this size), with room for a loaded machine.
func TestParseListLinear(t *testing.T) {
	t.Parallel()
	size := 1 << 20
	if testing.Short() {
		size = 1 << 16
	}
	rep := func(s string) string { return strings.Repeat(s, size/len(s)) }
	inputs := map[string]string{
		"nested comments":     rep("("),
		"closed nested":       rep("(") + rep(")"),
		"unclosed quotes":     rep(`"a`),
		"unclosed angles":     rep("<a@b.example "),
		"angles no comma":     rep("a <b <c@d.example> "),
		"unclosed literal":    rep("[a"),
		"encoded word starts": rep("=?a?q?.") + " ",
		"dot chain":           rep("a."),
		"at chain":            rep("a@"),
		"spaced addresses":    rep("a@b.example "),
		"route":               "<" + rep("@a,") + ":u@h.example>",
		"backslashes":         rep(`"\`),
		"100,000 addresses":   addrBigHeader(100_000),
	}
	for name, raw := range inputs {
		start := time.Now()
		ms := ParseList(raw)
		elapsed := time.Since(start)
		t.Logf("%s: %d bytes, %d mailboxes, %v", name, len(raw), len(ms), elapsed)
		assert.Less(t, elapsed, 10*time.Second, "%s: %d bytes took %v", name, len(raw), elapsed)
		if name == "100,000 addresses" {
			assert.Len(t, ms, 100_000)
		}
	}
}

func addrBigHeader(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",\r\n ")
		}
		fmt.Fprintf(&b, "User %d <user%d@domain%d.example>", i, i, i%200)
	}
	return b.String()
}

// TestParseListAllocations bounds the allocations of a 100,000-address header: a
// few per address (the key, the results), nothing per byte or per token.
func TestParseListAllocations(t *testing.T) {
	raw := addrBigHeader(100_000)
	allocs := testing.AllocsPerRun(2, func() { ParseList(raw) })
	require.Less(t, allocs, 3.0*100_000, "allocations for 100,000 addresses")
	t.Logf("%.0f allocations, %.2f per address", allocs, allocs/100_000)
}

func BenchmarkParseList(b *testing.B) {
	raw := addrBigHeader(1000)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		ParseList(raw)
	}
}
