package analyzer

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, q  string
		terms    []string
		prefixes []string
	}{
		{"all words required", "quarterly Report", []string{"quarterly", "report"}, nil},
		{"repeated word once", "report REPORT", []string{"report"}, nil},
		{"accents folded", "Résumé", []string{"resume"}, nil},
		{"nfkc full width", "ｒｅｐｏｒｔ", []string{"report"}, nil},
		{"decomposed query", "cafe\u0301", []string{"cafe"}, nil},
		{"one letter is a word", "a", []string{"a"}, nil},
		{"quoted phrase is adjacent pairs", `"the quick fox"`, []string{"the quick", "quick fox"}, nil},
		{"curly quotes", "“quick fox”", []string{"quick fox"}, nil},
		{"phrase of one word", `"fox"`, []string{"fox"}, nil},
		{"unclosed quote runs to the end", `budget "next year`, []string{"budget", "next year"}, nil},
		{"file name is a phrase", "report.pdf", []string{"report pdf"}, nil},
		{"address is a phrase", "alice@example.com", []string{"alice example", "example com"}, nil},
		{"prefix", "invo*", nil, []string{"invo"}},
		{"prefix accent folded", "RÉSU*", nil, []string{"resu"}},
		{"short prefix is the plain word", "in*", []string{"in"}, nil},
		{"two letter prefix with accent is plain", "é*", []string{"e"}, nil},
		{"prefix after a phrase part", "alice@exam*", []string{"alice"}, []string{"exam"}},
		{"star inside a phrase is punctuation", `"report* pdf"`, []string{"report pdf"}, nil},
		{"star alone", "*", nil, nil},
		{"cjk run is bigrams in sequence", "東京都庁", []string{"東京 京都", "京都 都庁"}, nil},
		{"cjk two characters is one bigram", "北京", []string{"北京"}, nil},
		{"cjk lone character", "东", []string{"东"}, nil},
		{"cjk star ignored", "東京*", []string{"東京"}, nil},
		{"korean words", "학교 공부", []string{"학교", "공부"}, nil},
		{"no searchable word", `!!! "" * -- 👍`, nil, nil},
		{"empty", "", nil, nil},
		{"operators are words", "cats OR -dogs", []string{"cats", "or", "dogs"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseQuery(tt.q)
			require.NoError(t, err)
			assert.Equal(t, tt.terms, got.Terms, "ParseQuery(%q).Terms: got %q; want %q", tt.q, got.Terms, tt.terms)
			assert.Equal(t, tt.prefixes, got.Prefixes, "ParseQuery(%q).Prefixes: got %q; want %q", tt.q, got.Prefixes, tt.prefixes)
			assert.Equal(t, len(tt.terms)+len(tt.prefixes) == 0, got.Empty())
		})
	}
}

func TestParseQueryBounds(t *testing.T) {
	t.Parallel()
	words := make([]string, MaxQueryTerms)
	for i := range words {
		words[i] = "w" + strings.Repeat("x", i)
	}
	q, err := ParseQuery(strings.Join(words, " "))
	require.NoError(t, err, "exactly MaxQueryTerms terms is allowed")
	assert.Len(t, q.Terms, MaxQueryTerms)

	_, err = ParseQuery(strings.Join(words, " ") + " one-more")
	assert.True(t, errors.Is(err, ErrQueryTooLong), "got %v; want ErrQueryTooLong", err)

	_, err = ParseQuery(strings.Repeat("a ", MaxQueryBytes))
	assert.True(t, errors.Is(err, ErrQueryTooLong), "got %v; want ErrQueryTooLong", err)
}

// A query made of a text's own words finds the text: every term of the query is among the
// text's index terms, and every prefix begins one of its words.
func TestQueryOfATextsOwnWordsMatchesIt(t *testing.T) {
	t.Parallel()
	text := "From: José Núñez <jose.nunez@Example.COM>\nSubject: Rechnung_2024-03.xlsx für Straße 5\n" +
		"東京タワーに行った。학교에서 공부했다. The quick brown fox."
	terms := map[string]bool{}
	for _, term := range AppendTerms(nil, text) {
		terms[term] = true
	}
	for _, q := range []string{
		"jose", "JOSÉ NUÑEZ", "jose.nunez@example.com", "example.com", `"quick brown fox"`, "rechnung_2024",
		"2024-03.xlsx", "strasse", "STRAẞE", "タワー", "東京", "に行っ", "교에서", "qui*", "rech*", "5", "fur",
	} {
		got, err := ParseQuery(q)
		require.NoError(t, err)
		require.False(t, got.Empty(), "ParseQuery(%q) is empty", q)
		for _, term := range got.Terms {
			assert.True(t, terms[term], "query %q: term %q not among the text's terms", q, term)
		}
		for _, p := range got.Prefixes {
			found := false
			for term := range terms {
				if strings.HasPrefix(term, p) && !strings.Contains(term, PairSeparator) {
					found = true
				}
			}
			assert.True(t, found, "query %q: prefix %q begins no word of the text", q, p)
		}
	}
}

// A query word matches whole words only: a single letter or a word's beginning is not a
// term of a text that holds it only inside a longer word, and a phrase is not its words
// apart.
func TestQueryDoesNotMatchInsideWordsOrWordsApart(t *testing.T) {
	t.Parallel()
	terms := map[string]bool{}
	for _, term := range AppendTerms(nil, "apple banana report for pdf-files 東京都") {
		terms[term] = true
	}
	for _, q := range []string{"a", "app", "report.pdf", `"banana apple"`, "都庁", "東"} {
		got, err := ParseQuery(q)
		require.NoError(t, err)
		missing := false
		for _, term := range got.Terms {
			missing = missing || !terms[term]
		}
		assert.True(t, missing, "query %q: every term %q is among the text's terms", q, got.Terms)
	}
}

func TestPrefixEndBoundsTheTermsThatBeginWithThePrefix(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"inv", "пер", "resu"} {
		end := PrefixEnd(p)
		for _, term := range []string{p, p + "oice", p + "ß", p + "\uFFFD", p + " pair", p + "я", p + "東京"} {
			assert.True(t, p <= term && term < end, "prefix %q: term %q outside [%q, %q)", p, term, p, end)
		}
		for _, term := range []string{"in", "inu", "пеп", "пе", "resv", "rest"} {
			if strings.HasPrefix(term, p) {
				continue
			}
			assert.False(t, p <= term && term < end, "prefix %q: term %q inside [%q, %q)", p, term, p, end)
		}
	}
}
