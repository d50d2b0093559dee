package extract

import (
	"context"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestPDFLazyMutations feeds the lazy reader mutated PDFs (bytes changed, cut, spliced,
// PDF keywords' letters dropped in) for 2 seconds, or for EXTRACT_MUTATE (a duration):
// it must never panic (readPDF would recover and fall back, hiding it) and each input
// must take a small part of the time limit. 50 s here: 1.2 million inputs, 83,465 read
// whole by the lazy reader, the slowest 6.3 ms.
func TestPDFLazyMutations(t *testing.T) {
	t.Parallel()
	run := 2 * time.Second
	if v := os.Getenv("EXTRACT_MUTATE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("EXTRACT_MUTATE=%q: %v", v, err)
		}
		run = d
	}
	lim := Limits{MaxText: 4096, MaxUnzip: 1 << 20, Timeout: 2 * time.Second}
	lim.setDefaults()
	var seeds [][]byte
	for _, f := range []string{"testdata/sample-chromium.pdf", "testdata/sample-libreoffice.pdf"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	seeds = append(seeds, pdfOf(t, true, []string{"fpdf"}, []string{"c1", "c2"}, "", ""), pdfOf(t, false, []string{"fpdf"}, []string{"c1"}, "", ""),
		pdfOfContent(plainStream("BT /F1 12 Tf 72 700 Td [(A) -300 (B)] TJ T* (C) ' ET")))
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(1, seed))
	const letters = "0123456789 /<>[]()RnobjendxrefstreamtrailerPrev"
	deadline := time.Now().Add(run)
	n, whole := 0, 0
	var slowest time.Duration
	for time.Now().Before(deadline) {
		d := append([]byte{}, seeds[r.IntN(len(seeds))]...)
		for range 1 + r.IntN(8) {
			switch i := r.IntN(len(d)); r.IntN(5) {
			case 0:
				d[i] = byte(r.IntN(256))
			case 1:
				d = d[:i+1]
			case 2:
				d = append(d[:i:i], append([]byte(strings.Repeat(" ", r.IntN(40))), d[i:]...)...)
			case 3:
				j := r.IntN(len(d))
				d = append(d[:min(i, j):min(i, j)], d[max(i, j):]...)
			case 4:
				d[i] = letters[r.IntN(len(letters))]
			}
			if len(d) == 0 {
				d = []byte("%PDF-1.4")
			}
		}
		start := time.Now()
		if readLazily(t, d, lim, seed) {
			whole++
		}
		slowest = max(slowest, time.Since(start))
		n++
	}
	t.Logf("%d inputs, %d read whole by the lazy reader, the slowest %v (seed %d)", n, whole, slowest, seed)
	if slowest > lim.Timeout/4 {
		t.Errorf("the slowest input took %v; want a small part of the %v time limit", slowest, lim.Timeout)
	}
}

// readLazily reads data with the lazy reader alone, failing the test on a panic.
func readLazily(t *testing.T, data []byte, lim Limits, seed uint64) (whole bool) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("the lazy reader panicked (seed %d, input %q): %v\n%s", seed, data, p, debug.Stack())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout)
	defer cancel()
	_, whole = readPDFLazyUnprotected(ctx, &run{lim: lim, out: newTextOut(lim.MaxText)}, data)
	return whole
}
