package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestHeaderChecksTagArchivedMail: rules added and removed through the management API tag
// the next message archived, without a restart (the API tells the tagger); a rule written
// elsewhere (another node) applies after Invalidate (SIGHUP); the tags show in the message
// API and filter a search.
func TestHeaderChecksTagArchivedMail(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newManagementFixture(t, d)
		tagger, err := app.NewHeaderTagger(f.db, app.HeaderTaggerConfig{Refresh: time.Hour})
		require.NoError(t, err)
		arc := taggingArchive(t, f, tagger)
		application, err := app.New(f.store, f.signer, app.ApplicationConfig{Archive: arc, Multitenancy: true,
			HeaderChecksChanged: tagger.Invalidate})
		require.NoError(t, err)
		f.api.Attach(application)
		archiveOne := func(subject string) int64 {
			t.Helper()
			raw := append([]byte("X-Mailer: BulkSender 2.0\r\n"), archivetest.Message("news@list.test", []string{acmeUser}, nil, subject, "body", day)...)
			p, err := arc.Prepare(archive.Incoming{Tenant: "acme", Raw: raw, Source: subject})
			require.NoError(t, err)
			res, err := arc.Commit(context.Background(), []*archive.Prepared{p})
			require.NoError(t, err)
			return res[0].ID
		}
		tagsOf := func(id int64) []string {
			t.Helper()
			resp, raw := f.getAs(acmeAuditor, fmt.Sprintf("/api/v1/messages/%d", id))
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
			var m struct {
				Tags []string `json:"tags"`
			}
			decode(t, raw, &m)
			return m.Tags
		}

		before := archiveOne("before any rule")
		f.mustWriteAt(acmeAdmin, "add_header_check", `[{"pattern":"(?mi)^x-mailer: bulk","tag":"bulk"}]`, acmeHost, 1)
		tagged := archiveOne("after the rule")
		assert.Equal(t, []string{}, tagsOf(before), "a rule applies to mail archived after it")
		assert.Equal(t, []string{"bulk"}, tagsOf(tagged), "at once, though the tagger reads its rules hourly")

		resp, raw := f.getAs(acmeAuditor, "/api/v1/messages?tag=bulk")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		var list messageList
		decode(t, raw, &list)
		assert.Equal(t, []string{"after the rule"}, subjects(list))

		id := f.readArray(acmeAdmin, "get_header_checks", acmeHost)[0]["id"]
		f.mustWriteAt(acmeAdmin, "delete_header_check", fmt.Sprintf(`[{"id":%v}]`, id), acmeHost, 1)
		assert.Equal(t, []string{}, tagsOf(archiveOne("after the delete")), "a deleted rule tags nothing more")

		_, err = f.db.Exec(f.db.Rebind(`INSERT INTO header_checks (tenant_id, pattern, tag) VALUES (?, ?, ?)`), "acme", "(?mi)^subject: urgent", "urgent")
		require.NoError(t, err)
		assert.Equal(t, []string{}, tagsOf(archiveOne("urgent: not yet")), "a rule written by another node waits for the refresh")
		tagger.Invalidate() // what SIGHUP does
		assert.Equal(t, []string{"urgent"}, tagsOf(archiveOne("urgent: now")))
	})
}

// taggingArchive is an archive over the fixture's database and files that tags with tagger.
func taggingArchive(t *testing.T, f *fixture, tagger archive.HeaderTagger) *archive.Archive {
	t.Helper()
	blobs, keys := arcParts(t, f)
	arc, err := archive.New(f.db, blobs, keys, archive.Options{Tagger: tagger})
	require.NoError(t, err)
	return arc
}

// arcParts are the message store and keys of the fixture's archive, for a second Archive
// over them with other options.
func arcParts(t *testing.T, f *fixture) (*archive.LocalStore, *archive.Keyring) {
	t.Helper()
	blobs, err := archive.NewLocalStore(filepath.Join(f.dataDir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(f.dataDir, "keys"))
	require.NoError(t, err)
	return blobs, keys
}
