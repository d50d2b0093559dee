package analyzer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// genDomain is a domain of the generator: its Unicode and its ASCII (xn--) form.
type genDomain struct{ unicode, ascii string }

var genDomains = []genDomain{
	{"example.com", "example.com"},
	{"mail.example.org", "mail.example.org"},
	{"bücher.example", "xn--bcher-kva.example"},
	{"mächine.example", "xn--mchine-bua.example"},
	{"пример.рф", "xn--e1afmkfd.xn--p1ai"},
	{"例え.テスト", "xn--r8jz45g.xn--zckzah"},
	{"faß.de", "xn--fa-hia.de"},
}

var genAtoms = []string{"john", "Doe", "a", "x1", "mary-ann", "o'brien", "first+tag", "q_r", "JÖRG", "über", "z#1", "~u"}

// genCFWS is some white space and comments where CFWS may stand: nothing, spaces,
// folding, a comment, a nested comment.
func genCFWS(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		return " "
	case 1:
		return "\r\n "
	case 2:
		return "(c)"
	case 3:
		return " (nested (comment) here) \r\n\t"
	default:
		return ""
	}
}

func genCase(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		if r.IntN(2) == 0 {
			b.WriteRune(unicode.ToUpper(c))
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// genMailbox renders one random mailbox in a random obsolete form and returns the
// rendering and the key it must parse back to.
func genMailbox(r *rand.Rand) (string, string) {
	words := make([]string, 1+r.IntN(3))
	for i := range words {
		words[i] = genAtoms[r.IntN(len(genAtoms))]
	}
	spaced := len(words) > 1 && r.IntN(6) == 0 // a local part that needs quotes
	content := strings.Join(words, ".")
	if spaced {
		content = strings.Join(words, " ")
	}
	var local string
	switch {
	case spaced:
		local = `"` + genCase(r, content) + `"`
	case r.IntN(4) == 0: // unnecessary quotes
		local = `"` + genCase(r, content) + `"`
	default: // obs-local-part: words, each maybe quoted, dots between CFWS
		parts := make([]string, len(words))
		for i, w := range words {
			w = genCase(r, w)
			if r.IntN(5) == 0 {
				w = `"` + w + `"`
			}
			parts[i] = w
		}
		local = strings.Join(parts, genCFWS(r)+"."+genCFWS(r))
	}
	d := genDomains[r.IntN(len(genDomains))]
	dom := d.unicode
	if r.IntN(2) == 0 {
		dom = d.ascii
	}
	dom = strings.Join(strings.Split(genCase(r, dom), "."), genCFWS(r)+"."+genCFWS(r))
	spec := local + genCFWS(r) + "@" + genCFWS(r) + dom

	wantLocal := strings.ToLower(content)
	if spaced {
		wantLocal = `"` + wantLocal + `"`
	}
	want := wantLocal + "@" + d.ascii

	switch r.IntN(5) {
	case 0: // bare addr-spec
		return genCFWS(r) + spec + genCFWS(r), want
	case 1: // a name that looks like an address
		return `"` + words[0] + `@decoy.example" <` + spec + ">", want
	case 2: // a route
		return "Name " + genCFWS(r) + "<@relay.example," + genCFWS(r) + "@r2.example:" + spec + ">" + genCFWS(r), want
	case 3: // an encoded-word name
		return "=?utf-8?q?J=C3=B6rg?= <" + spec + ">", want
	default: // a quoted name with a comma
		return `"Doe, John" ` + genCFWS(r) + "<" + genCFWS(r) + spec + genCFWS(r) + ">", want
	}
}

// TestParseListProperty renders random mailboxes in random obsolete forms (comments
// and folding at CFWS positions, routes, unnecessary quotes, mixed case, Unicode and
// xn-- domains, empty list elements, groups) and parses them back to the same keys.
func TestParseListProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 5322))
	for range 2000 {
		n := 1 + r.IntN(5)
		var parts, want []string
		for range n {
			s, k := genMailbox(r)
			parts = append(parts, s)
			want = append(want, k)
			if r.IntN(4) == 0 {
				parts = append(parts, genCFWS(r)) // an empty element
			}
		}
		raw := strings.Join(parts, ","+genCFWS(r))
		if r.IntN(4) == 0 {
			raw = "Group" + genCFWS(r) + ":" + raw + ";" + genCFWS(r)
		}
		var got []string
		for _, m := range ParseList(raw) {
			got = append(got, m.Key)
		}
		require.Equal(t, want, got, "ParseList(%q)", raw)
		for _, k := range want {
			key, err := Normalize(k)
			require.NoError(t, err, k)
			require.Equal(t, k, key)
		}
	}
}
