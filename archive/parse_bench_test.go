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
	raws := corpusRaws(b)
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

// corpusRaws reads every corpus file.
func corpusRaws(b *testing.B) [][]byte {
	var raws [][]byte
	for _, path := range archivetest.CorpusFiles(b) {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	return raws
}

// BenchmarkParseHostile parses the hostile messages of TestParseBounds: a MIME bomb of
// 50,000 nested multiparts, 20,000 attachments, 100,000 recipients and a huge header.
func BenchmarkParseHostile(b *testing.B) {
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"nested-50000", archivetest.DeepMessage(50000)},
		{"attachments-20000", archivetest.WideMessage(20000)},
		{"recipients-100000", archivetest.ManyRecipients(100000)},
		{"header-30000", archivetest.HugeHeader(30000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := archive.NewParser("")
			b.ReportAllocs()
			b.SetBytes(int64(len(c.raw)))
			for b.Loop() {
				if _, err := p.Parse(c.raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSealCorpus compresses and encrypts every corpus file once per iteration (what
// the import does to each message after parsing it) and reports the cost per message.
func BenchmarkSealCorpus(b *testing.B) {
	raws := corpusRaws(b)
	keys, err := archive.LoadOrCreateKeyring(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, raw := range raws {
			if _, err := keys.Seal("t", raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(raws)), "ns/message")
}
