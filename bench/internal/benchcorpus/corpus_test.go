package benchcorpus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadDropsTheMboxLineAndSkipsWhatTheParserRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a.eml":     "From a@example.org Sun Mar  1 10:00:00 2026\nFrom: a@example.org\nTo: c@example.org\nSubject: one\n\nbody\n",
		"notes.txt": "just some notes, no header block\n",
		"README.md": "# not a message\n",
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	seeds, skipped, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, seeds, 1)
	assert.Equal(t, "From: a@example.org\nTo: c@example.org\nSubject: one\n\nbody\n", string(seeds[0].Raw))
	require.Len(t, skipped, 1, "README.md is not read at all")
	assert.Equal(t, "notes.txt", skipped[0].Name)
}

func TestCopiesAreDistinctAndWrittenAsFiles(t *testing.T) {
	t.Parallel()
	seeds := []Seed{{Name: "a", Raw: []byte("Subject: a\n\nx\n")}, {Name: "b", Raw: []byte("Subject: b\n\ny\n")}}
	msgs := Copies(seeds, 3)
	assert.Equal(t, []string{"X-Bench-Copy: 1\nSubject: a\n\nx\n", "X-Bench-Copy: 2\nSubject: b\n\ny\n", "X-Bench-Copy: 3\nSubject: a\n\nx\n"},
		[]string{string(msgs[0]), string(msgs[1]), string(msgs[2])})
	assert.Equal(t, int64(len(msgs[0])+len(msgs[1])+len(msgs[2])), Size(msgs))
	dir := filepath.Join(t.TempDir(), "src")
	require.NoError(t, WriteFiles(dir, msgs))
	got, err := os.ReadFile(filepath.Join(dir, "copy-000003.eml"))
	require.NoError(t, err)
	assert.Equal(t, msgs[2], got)
}
