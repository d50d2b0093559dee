package projections_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// eventsHash is the certificate hash of request id derived from its events, the way the
// bundle and its verifier derive it.
func eventsHash(t *testing.T, store *eventstore.Store, id string) string {
	t.Helper()
	recs, err := store.Load(context.Background(), erasure.StreamID(id))
	require.NoError(t, err)
	body, err := certificate.BodyFromEvents(recs)
	require.NoError(t, err)
	hash, err := body.Hash()
	require.NoError(t, err)
	return hash
}

// TestCertificateHashComesFromTheEvents changes the gdpr_requests row of a request before
// its completion: certificate_hash is still the hash of the body derived from the events,
// live and rebuilt, because the projection derives it from the events and never from the
// row.
func TestCertificateHashComesFromTheEvents(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All(), Clock: tickingClock()})
		require.NoError(t, err)
		const id = "GDPR-2026-00003"
		stream := eventstore.Stream{ID: erasure.StreamID(id), Type: erasure.StreamType, TenantID: "acme"}
		appendAll := func(events ...domain.Event) {
			for _, e := range events {
				_, err := store.Append(ctx, stream, eventstore.AnyVersion, eventstore.FromDomain(e, domain.Metadata{Actor: "test"}))
				require.NoError(t, err)
			}
		}
		appendAll(&erasure.Created{RequestID: id, TenantID: "acme", EmailAddresses: []string{"a@x.test"}, RequesterName: "Ann", CreatedBy: "auditor"},
			&erasure.AssessmentStarted{RequestID: id},
			&erasure.AssessmentCompleted{RequestID: id, Counts: erasure.Counts{EmailsAsSender: 1, AffectedEmails: 1}},
			&erasure.Approved{RequestID: id, ApprovedBy: "approver"},
			&erasure.ExecutionStarted{RequestID: id, StartedBy: "approver"})
		_, err = db.Exec(db.Rebind(`UPDATE gdpr_requests SET requester_name = ?, approved_by = ?, email_addresses = ? WHERE request_id = ?`),
			"Mallory", "nobody", `["z@z.test"]`, id)
		require.NoError(t, err)
		appendAll(&erasure.ExecutionCompleted{RequestID: id, DeletedCount: 1})

		want := eventsHash(t, store, id)
		assert.Equal(t, want, storedHash(t, db, id), "live certificate_hash; want the hash of the events' body")
		_, err = projections.Rebuild(ctx, store, nil)
		require.NoError(t, err)
		assert.Equal(t, want, storedHash(t, db, id), "rebuilt certificate_hash")
	})
}

func storedHash(t *testing.T, db *database.DB, id string) string {
	t.Helper()
	var hash string
	require.NoError(t, db.QueryRow(db.Rebind(`SELECT certificate_hash FROM gdpr_requests WHERE request_id = ?`), id).Scan(&hash))
	return hash
}
