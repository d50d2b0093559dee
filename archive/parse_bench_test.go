package archive_test

import (
	"os"
	"testing"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
)

// BenchmarkParseCorpus parses every corpus file once per iteration and reports the cost
// per message (files that are not messages included: they are part of an import too).
func BenchmarkParseCorpus(b *testing.B) {
	var raws [][]byte
	for _, path := range archivetest.CorpusFiles(b) {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	p := archive.NewParser("X-Spam-Flag: YES")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, raw := range raws {
			_, _ = p.Parse(raw)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(raws)), "ns/message")
}
