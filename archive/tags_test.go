package archive_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// patternTagger tags by fixed rules per tenant, as app.HeaderTagger does from the database.
type patternTagger map[string][]struct {
	re  *regexp.Regexp
	tag string
}

func (p patternTagger) Tags(tenant string, header []byte) []string {
	var out []string
	for _, r := range p[tenant] {
		if r.re.Match(header) {
			out = append(out, r.tag)
		}
	}
	return out
}

func TestHeaderBlock(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "A: 1\r\nB: 2", string(archive.HeaderBlock([]byte("A: 1\r\nB: 2\r\n\r\nX-In-Body: yes\r\n"))))
	assert.Equal(t, "A: 1\nB: 2", string(archive.HeaderBlock([]byte("A: 1\nB: 2\n\nX-In-Body: yes\n"))))
	assert.Equal(t, "A: 1", string(archive.HeaderBlock([]byte("A: 1"))), "no body")
	huge := []byte("X: " + strings.Repeat("a", 2*archive.MaxTaggedHeader))
	assert.Len(t, archive.HeaderBlock(huge), archive.MaxTaggedHeader, "bounded")
}

func TestHeaderChecksTagMessages(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		tagger := patternTagger{"acme": {
			{regexp.MustCompile(`(?mi)^X-Mailer: .*Outlook`), "outlook"},
			{regexp.MustCompile(`(?mi)^Subject: .*invoice`), "finance"},
			{regexp.MustCompile(`(?mi)^X-In-Body: yes`), "never"}, // the body is not the header
		}}
		dir := t.TempDir()
		blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
		require.NoError(t, err)
		keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
		require.NoError(t, err)
		arc, err := archive.New(dbtest.Open(t, d), blobs, keys, archive.Options{Tagger: tagger})
		require.NoError(t, err)
		f := &fixture{arc: arc}
		sent := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
		invoice := append([]byte("X-Mailer: Microsoft Outlook 16.0\r\n"),
			archivetest.Message("ap@vendor.test", []string{"bob@acme.test"}, nil, "Invoice 2026-04", "X-In-Body: yes\r\n", sent)...)
		plain := archivetest.Message("carol@acme.test", []string{"bob@acme.test"}, nil, "lunch", "at noon", sent)
		res := f.store(t, "acme", invoice, plain)
		other := f.store(t, "beta", invoice) // beta has no rules

		ctx := context.Background()
		m, err := arc.Get(ctx, "acme", res[0].ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"finance", "outlook"}, m.Tags)
		m, err = arc.Get(ctx, "acme", res[1].ID)
		require.NoError(t, err)
		assert.Equal(t, []string{}, m.Tags)
		m, err = arc.Get(ctx, "beta", other[0].ID)
		require.NoError(t, err)
		assert.Empty(t, m.Tags, "rules are per tenant")

		found, total, err := arc.Search(ctx, archive.Query{Tenant: "acme", Tag: "finance"})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		assert.Equal(t, res[0].ID, found[0].ID)
		assert.Equal(t, []string{"finance", "outlook"}, found[0].Tags, "a search shows the tags")
		_, total, err = arc.Search(ctx, archive.Query{Tenant: "acme", Tag: "finance", Text: "lunch"})
		require.NoError(t, err)
		assert.Equal(t, 0, total)
		_, total, err = arc.Search(ctx, archive.Query{Tenant: "beta", Tag: "finance"})
		require.NoError(t, err)
		assert.Equal(t, 0, total)
	})
}
