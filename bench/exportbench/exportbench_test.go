package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
)

// TestSmallRunMeasuresEverything runs the whole benchmark on a few copies of the corpus:
// every message is exported, the ZIP is downloaded in process and over HTTP, and the
// report states each goal.
func TestSmallRunMeasuresEverything(t *testing.T) {
	cfg, err := parseFlags([]string{"-messages", "40", "-workers", "2", "-rounds", "1", "-batch", "16",
		"-tmpdir", t.TempDir(), "-corpus", archivetest.CorpusDir(t)}, io.Discard)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, &out))
	report := out.String()
	assert.Equal(t, 2, strings.Count(report, "40 processed, 0 failed"), "the natives-only and the all-options export")
	for _, line := range []string{"decrypt-only read", "read+parse", "floor: decrypt + create the same files", "floor + the load files' hashes",
		"natives-only floor", "natives-only export / its floor", "all-options export / its floor", "goal natives-only >= 0.8 of its floor",
		"the median of", "peak memory",
		"goal >= 1000 emails/s", "ExportDownload.Stream", "GET …/download"} {
		assert.Contains(t, report, line)
	}
	assert.Regexp(t, regexp.MustCompile(`goal peak < 512 MiB: (met|NOT MET)`), report)
	if !strings.Contains(report, "zip -0 -r: skipped") {
		assert.Contains(t, report, "HTTP download / zip -0:")
	}
}

func TestFlagsAreChecked(t *testing.T) {
	_, err := parseFlags([]string{"-workers", "33"}, io.Discard)
	assert.Error(t, err)
	_, err = parseFlags([]string{"-messages", "0"}, io.Discard)
	assert.Error(t, err)
}
