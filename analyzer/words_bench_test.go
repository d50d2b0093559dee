package analyzer

import (
	"strings"
	"testing"
)

// wordBenchText is about 100 KB of mixed mail text: mostly English, with accents,
// addresses, URLs, German, Russian, Chinese and Japanese.
func wordBenchText() string {
	para := "Hello Alice, the quarterly report.pdf is attached (see https://www.example.org/q3?id=42). " +
		"Please forward it to bob@example.com before Friday; résumé, naïve café, Straße. " +
		"Привет, как дела? 我爱北京天安门。東京タワーに行った。 Thanks, — Carol\n"
	var b strings.Builder
	for b.Len() < 100<<10 {
		b.WriteString(para)
	}
	return b.String()
}

func BenchmarkWords(b *testing.B) {
	text := wordBenchText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		Words(text, func(string) { n++ })
	}
}

func BenchmarkTermSet(b *testing.B) {
	text := wordBenchText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var s TermSet
	for b.Loop() {
		s.Reset()
		s.Add(text)
	}
}

func BenchmarkWordsASCII(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog, report.pdf at alice@example.com. ", 1300)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Words(text, func(string) {})
	}
}
