package analyzer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzAnalyzer(f *testing.F) {
	for _, s := range []string{
		"Hello, World!", "résumé", "東京タワーに行った", "<p>a&amp;b</p><script>x</script>", `"a phrase" pre*`,
		"\u0301\u0301", "\xff\xfe", "İ", "ﬁ", "ｶﾞ", "a\u00adb", "<noscript><noscript>", "\u1112\u1161\u11AB", "<title>\x00</title>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Words(s, func(w string) {
			if w == "" || !utf8.ValidString(w) || len(w) > MaxWordBytes {
				t.Fatalf("Words(%q): bad word %q", s, w)
			}
			if strings.ContainsRune(w, ' ') {
				t.Fatalf("Words(%q): word %q holds the pair separator", s, w)
			}
		})
		q, err := ParseQuery(s)
		if err == nil && len(q.Terms)+len(q.Prefixes) > MaxQueryTerms {
			t.Fatalf("ParseQuery(%q): %d terms", s, len(q.Terms)+len(q.Prefixes))
		}
		if text := HTMLText(s); len(text) > len(s)+1 {
			t.Fatalf("HTMLText(%q) = %q: longer than its input", s, text)
		}
	})
}
