package archive_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// senderDays keeps the mail of listed senders for their days, as app.RetentionPolicy
// would for sender rules.
type senderDays map[string]int

func (s senderDays) Retention(_ string, roles []analyzer.Address) (time.Duration, bool) {
	for _, r := range roles {
		if d, ok := s[r.Key]; ok && r.Role == analyzer.Sender {
			return time.Duration(d) * 24 * time.Hour, true
		}
	}
	return 0, false
}

func TestRetentionPolicySetsRetained(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		const year = 365 * 24 * time.Hour
		f := spamFixture(t, d, archive.Options{Retention: year, SpamRetention: 7 * 24 * time.Hour,
			Policy: senderDays{"legal@acme.test": 3650, "news@acme.test": 30}})
		sent := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		legal := archivetest.Message("Legal <LEGAL@acme.test>", []string{"bob@acme.test"}, nil, "contract", "signed", sent)
		news := archivetest.Message("news@acme.test", []string{"bob@acme.test"}, nil, "weekly", "news", sent)
		other := archivetest.Message("carol@acme.test", []string{"bob@acme.test"}, nil, "lunch", "noon", sent)
		spamNews := append([]byte("X-Spam-Flag: YES\r\n"), archivetest.Message("legal@acme.test", nil, nil, "spam", "x", sent)...)
		res := f.store(t, "acme", legal, news, other, spamNews)
		want := []time.Duration{3650 * 24 * time.Hour, 30 * 24 * time.Hour, year, 7 * 24 * time.Hour}
		for i, r := range res {
			m, err := f.arc.Get(context.Background(), "acme", r.ID)
			require.NoError(t, err)
			assert.WithinDuration(t, m.Arrived.Add(want[i]), m.Retained, time.Second, "message %d", i)
		}
	})
}

func TestPurgeSparesExemptTenantsButNotErasures(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		sent := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		keep := f.store(t, "acme", archivetest.Message("a@acme.test", []string{"b@acme.test"}, nil, "old", "x", sent),
			archivetest.Message("gone@acme.test", []string{"b@acme.test"}, nil, "erased", "y", sent))
		purge := f.store(t, "purger", archivetest.Message("a@purger.test", []string{"b@purger.test"}, nil, "old", "z", sent))
		now := time.Now().UTC()
		_, err := f.arc.Erase(ctx, archive.EraseRequest{Tenant: "acme", RequestID: "GDPR-1", Addresses: []string{"gone@acme.test"}, Today: now})
		require.NoError(t, err)
		_, err = f.db.Exec(f.db.Rebind(`UPDATE metadata SET retained = ? WHERE erased_by IS NULL`), database.TimeArg(d, now.AddDate(-1, 0, 0)))
		require.NoError(t, err)

		res, err := f.arc.Purge(ctx, now.Add(time.Hour), archive.PurgeOptions{Exempt: []string{"acme"}})
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"acme": 1, "purger": 1}, res.ByTenant, "the erased message of the exempt tenant goes too")
		assert.Equal(t, 0, res.HeldBack, "an exempt tenant's mail is not held back: it has no end")
		f.assertPurged(t, []int64{keep[0].ID, keep[1].ID}, []int64{keep[1].ID}) // (assertPurged reads acme's files)
		var deleted int
		require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT deleted FROM metadata WHERE id = ?`), purge[0].ID).Scan(&deleted))
		assert.Equal(t, 1, deleted, "the other tenant's expired mail is purged")
	})
}
