package analyzer

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// The words of a text: the rules every index stores and every query is read by, the same
// on SQLite, PostgreSQL and MariaDB (docs/search-rules.md says them for users).
//
//  1. A word is a run of Unicode letters (L), marks (M) and numbers (N) after NFKC and full
//     case folding (cases.Fold); anything else separates words. Addresses, host names,
//     URLs and file names thus split at their punctuation: report.pdf is report, pdf.
//  2. A combining mark does not split a word; a mark with no letter or number before it
//     in the word is dropped, and a run of marks alone is no word.
//  3. Accents: the index holds one form of each word, with its accents removed (NFD, drop
//     the nonspacing marks, NFC), and queries are read the same way, so resume finds résumé
//     and résumé finds resume. Marks are removed only after a Latin, Greek, Cyrillic,
//     Arabic or Hebrew letter, where they are accents or optional vowel points; elsewhere
//     (Indic vowel signs and viramas, Thai, Japanese voicing marks) a mark spells another
//     word and is kept. A few Latin letters that have no decomposition are folded too:
//     ø→o, ł→l, đ→d, ħ→h, ŧ→t, ı→i, æ→ae, œ→oe (ß folds to ss by case folding). This
//     over-matches a little (Russian й and и are one word), and never misses.
//  4. Default-ignorable characters (soft hyphen, zero width joiner and non-joiner, bidi
//     marks, variation selectors, Arabic tatweel) neither split nor stay in a word; the
//     zero width space separates words. Enclosing marks (a keycap) are dropped.
//  5. Chinese, Japanese and Korean (Han, Hiragana, Katakana, Hangul, Bopomofo, and the
//     prolonged sound mark ー) are written without spaces: a run of two or more such
//     characters is indexed as its overlapping bigrams, a character alone as itself, so any
//     run of two or more consecutive characters is found by its bigrams in sequence.
//  6. A word is cut to MaxWordBytes bytes at a character boundary; queries are cut the
//     same way, so a long word still finds itself.
//
// Phrases: an index stores the words (rule 1 to 6) and the pairs of adjacent words,
// "w1 w2" (PairSeparator between them); a phrase query requires the pairs of its adjacent
// words. Every database can store such terms in one plain B-tree table (message, term)
// and intersect them, with no positions: a table of positions would hold every occurrence
// of every word (several times the rows of distinct terms) and need a self-join per word
// of a phrase, and checking phrases against the stored text would decrypt and parse
// candidate messages at query time. A phrase of two words, the common case (report.pdf,
// example.com, "quarterly report"), is exact; a longer one requires each adjacent pair,
// which may also match the pairs apart (a b … b c for "a b c"), never miss.

// MaxWordBytes bounds the length of one word in bytes (a pair is at most twice that plus
// one). Longer words are cut at a character boundary.
const MaxWordBytes = 128

// PairSeparator joins the two words of a pair term. Words never hold it.
const PairSeparator = " "

// Words calls emit with each word of text, in order, repeated words each time: the
// normalised words of rules 1 to 6, and for Chinese, Japanese and Korean the bigrams (or a
// lone character). Each string emitted may be kept. Words is linear in the size of text.
func Words(text string, emit func(word string)) {
	var sc *wordScanner
	for len(text) > 0 {
		i := 0
		for i < len(text) && wordIsASCIISeparator(text[i]) {
			i++
		}
		j, ascii := i, true
		for j < len(text) && !wordIsASCIISeparator(text[j]) {
			if text[j] >= utf8.RuneSelf {
				ascii = false
			}
			j++
		}
		switch chunk := text[i:j]; {
		case chunk == "":
		case ascii:
			emit(wordASCII(chunk))
		default:
			if sc == nil {
				sc = wordScanners.Get().(*wordScanner)
				defer sc.release()
			}
			sc.chunk(chunk, emit)
		}
		text = text[j:]
	}
}

// AppendTerms appends the index terms of text to dst, in order, repeats included: each
// word of Words, and after each word but the first the pair of it and the word before.
func AppendTerms(dst []string, text string) []string {
	prev := ""
	Words(text, func(w string) {
		dst = append(dst, w)
		if prev != "" {
			dst = append(dst, prev+PairSeparator+w)
		}
		prev = w
	})
	return dst
}

// wordIsASCIISeparator reports whether b is an ASCII byte that is no letter or digit.
// Such a byte separates words whatever surrounds it: NFKC leaves ASCII alone, and what a
// mark after it may compose with it (= and U+0338 make ≠) is no letter either, so text can
// be cut there before it is normalised.
func wordIsASCIISeparator(b byte) bool {
	return b < utf8.RuneSelf && !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9')
}

// wordASCII is the word of an ASCII run of letters and digits: lower case, cut.
func wordASCII(s string) string {
	if len(s) > MaxWordBytes {
		s = s[:MaxWordBytes]
	}
	return addrLowerASCII(s)
}

// wordScanner normalises the runs of text that hold non-ASCII characters, in buffers it
// keeps from one run to the next.
type wordScanner struct {
	fold    cases.Caser
	a, b, w []byte
	// memo holds the words of the short runs normalised lately: words repeat (a Zipf
	// law), and normalising a run costs far more than looking it up.
	memo  map[string][]string
	words []string // the words of the run being normalised, for memo
}

// Bounds of a scanner's memo: runs of at most memoRunBytes bytes, at most memoRuns of
// them (the memo is emptied when full).
const (
	memoRunBytes = 64
	memoRuns     = 8192
)

var wordScanners = sync.Pool{New: func() any { return &wordScanner{fold: cases.Fold()} }}

// wordScannerKeep bounds the buffers a scanner keeps for the next text.
const wordScannerKeep = 64 << 10

// release returns the scanner to the pool, without buffers grown large by a long run.
func (sc *wordScanner) release() {
	for _, b := range []*[]byte{&sc.a, &sc.b, &sc.w} {
		if cap(*b) > wordScannerKeep {
			*b = nil
		}
	}
	wordScanners.Put(sc)
}

// normalize returns chunk in compatibility caseless form (Unicode D146, without its first
// fold, which only matters for U+0345, folded by the second): NFKD, full case folding,
// NFKD again. The result is valid until the next call.
func (sc *wordScanner) normalize(chunk string) []byte {
	sc.a = norm.NFKD.AppendString(sc.a[:0], chunk)
	sc.b = sc.foldInto(sc.b[:0], sc.a)
	sc.a = norm.NFKD.Append(sc.a[:0], sc.b...)
	return sc.a
}

func (sc *wordScanner) foldInto(dst, src []byte) []byte {
	sc.fold.Reset()
	for {
		dst = slices.Grow(dst, len(src)+16)
		nDst, nSrc, err := sc.fold.Transform(dst[len(dst):cap(dst)], src, true)
		dst, src = dst[:len(dst)+nDst], src[nSrc:]
		if !errors.Is(err, transform.ErrShortDst) || len(src) == 0 {
			return dst
		}
	}
}

// chunk emits the words of a run of text with no ASCII separator in it, from the memo
// when the run is short and was seen lately.
func (sc *wordScanner) chunk(chunk string, emit func(string)) {
	if len(chunk) > memoRunBytes {
		sc.normalizeRun(chunk, emit)
		return
	}
	if words, ok := sc.memo[chunk]; ok {
		for _, w := range words {
			emit(w)
		}
		return
	}
	sc.words = sc.words[:0]
	sc.normalizeRun(chunk, func(w string) { sc.words = append(sc.words, w) })
	if sc.memo == nil || len(sc.memo) >= memoRuns {
		sc.memo = make(map[string][]string, memoRuns)
	}
	words := slices.Clone(sc.words)
	sc.memo[strings.Clone(chunk)] = words
	for _, w := range words {
		emit(w)
	}
}

// normalizeRun emits the words of a run of text with no ASCII separator in it.
func (sc *wordScanner) normalizeRun(chunk string, emit func(string)) {
	s := sc.normalize(chunk)
	buf := sc.b[:0]
	hasBase, strippable := false, false
	flush := func() {
		if hasBase {
			sc.w = norm.NFC.Append(sc.w[:0], buf...)
			wordSplitCJK(string(sc.w), emit)
		}
		buf, hasBase, strippable = buf[:0], false, false
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		switch {
		case wordIsIgnorable(r):
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			buf = wordAppendLetter(buf, r)
			hasBase, strippable = true, wordMarksAreAccents(r)
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
			if hasBase && !(strippable && unicode.Is(unicode.Mn, r)) {
				buf = utf8.AppendRune(buf, r)
			}
		case unicode.Is(unicode.Me, r):
		default:
			flush()
		}
	}
	flush()
	sc.b = buf
}

// wordAppendLetter appends a letter, folding the Latin letters that carry an accent-like
// stroke or are a ligature and have no canonical decomposition to the letters they are
// typed as.
func wordAppendLetter(buf []byte, r rune) []byte {
	switch r {
	case 'ø':
		return append(buf, 'o')
	case 'ł':
		return append(buf, 'l')
	case 'đ':
		return append(buf, 'd')
	case 'ħ':
		return append(buf, 'h')
	case 'ŧ':
		return append(buf, 't')
	case 'ı':
		return append(buf, 'i')
	case 'æ':
		return append(buf, 'a', 'e')
	case 'œ':
		return append(buf, 'o', 'e')
	}
	return utf8.AppendRune(buf, r)
}

// wordAccentScripts are the scripts whose nonspacing marks are accents or optional vowel
// points, removed from words.
var wordAccentScripts = []*unicode.RangeTable{unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Arabic, unicode.Hebrew}

func wordMarksAreAccents(r rune) bool {
	if r < 0x80 {
		return true
	}
	return unicode.In(r, wordAccentScripts...)
}

// wordIsIgnorable reports whether r is a default-ignorable code point (Unicode's
// DerivedCoreProperties) or the Arabic tatweel, but not the zero width space, which
// separates words.
func wordIsIgnorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0xAD, r == 0x34F, r == 0x61C, r == 0x640, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		0x180B <= r && r <= 0x180F, 0x200C <= r && r <= 0x200F, 0x202A <= r && r <= 0x202E,
		0x2060 <= r && r <= 0x206F, r == 0x3164, 0xFE00 <= r && r <= 0xFE0F, r == 0xFEFF, r == 0xFFA0,
		0xFFF0 <= r && r <= 0xFFF8, 0x1BCA0 <= r && r <= 0x1BCA3, 0x1D173 <= r && r <= 0x1D17A,
		0xE0000 <= r && r <= 0xE0FFF:
		return true
	}
	return false
}

// wordIsCJK reports whether r is written without spaces between words: Han, Hiragana,
// Katakana, Hangul, Bopomofo, or the prolonged sound mark.
func wordIsCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return r == 0x30FC || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo)
}

// wordSplitCJK emits a normalised word, its Chinese, Japanese and Korean runs as bigrams
// (a run of one character as itself) and the rest as words, each cut to MaxWordBytes. A
// mark belongs to the character before it.
func wordSplitCJK(w string, emit func(string)) {
	start, cjk := 0, false
	var chars []int // offsets of the characters of the current CJK run
	end := func(stop int) {
		if start == stop {
			return
		}
		if !cjk {
			emit(wordCut(w[start:stop]))
			return
		}
		chars = append(chars, stop)
		if len(chars) == 2 {
			emit(wordCut(w[chars[0]:stop]))
		}
		for i := 0; i+2 < len(chars); i++ {
			emit(wordCut(w[chars[i]:chars[i+2]]))
		}
		chars = chars[:0]
	}
	for i, r := range w {
		if i > 0 && unicode.IsMark(r) {
			continue
		}
		isCJK := wordIsCJK(r)
		if i == 0 || isCJK != cjk {
			end(i)
			start, cjk = i, isCJK
		}
		if isCJK {
			chars = append(chars, i)
		}
	}
	end(len(w))
}

// wordCut cuts w to at most MaxWordBytes bytes at a character boundary.
func wordCut(w string) string {
	if len(w) <= MaxWordBytes {
		return w
	}
	i := MaxWordBytes
	for i > 0 && !utf8.RuneStart(w[i]) {
		i--
	}
	return w[:i]
}
