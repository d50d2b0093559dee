package production_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/production"
)

// TestProductionOfCorpusIsUTF8: every load file of a production of every corpus message
// (CSV and both DAT sets), and every text file, is valid UTF-8. (That every field of the
// parse is UTF-8 is archive's TestParseCorpusIsUTF8.)
func TestProductionOfCorpusIsUTF8(t *testing.T) {
	p := archive.NewParser("X-Spam-Flag: YES")
	root := t.TempDir()
	dirs := map[string]bool{}
	for i, concordance := range []bool{false, true} {
		job := []string{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"}[i]
		prod, err := production.Create(root, "acme", job, production.Config{
			Prefix: "U", Digits: 6, Natives: true, Text: true, Attachments: true, CSV: true, DAT: true, Concordance: concordance, DateFormat: "iso8601"})
		require.NoError(t, err)
		n := 0
		for _, path := range archivetest.CorpusFiles(t) {
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			m, err := p.Parse(raw)
			if err != nil {
				continue
			}
			n++
			_, err = prod.Add(int64(n), document(int64(n), string(raw), m))
			require.NoError(t, err)
		}
		_, err = prod.Close()
		require.NoError(t, err)
		dirs[prod.Dir()] = true
	}
	for dir := range dirs {
		checked := 0
		require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !(strings.HasPrefix(info.Name(), "loadfile.") || strings.Contains(path, "/TEXT/")) {
				return err
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, utf8.Valid(b), "%s is not valid UTF-8", path)
			checked++
			return nil
		}))
		assert.Greater(t, checked, 2)
	}
}
