package archive_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/migrations"
)

// TestAddressRoleMigrationKeepsOldCoverage: messages archived before address_role existed
// get role rows from the old columns when the migration runs, so an erasure finds at
// least what it found before (docs/operations.md, "Upgrading to address roles").
func TestAddressRoleMigrationKeepsOldCoverage(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db, now, later := beforeAddressRoles(t, d)
		for i, m := range []struct{ from, fromDomain, digest string }{
			{"a@x.test", "x.test", "01"}, {"c@z.test", "z.test", "02"}, {"", "", "03"},
		} {
			_, err := db.Exec(db.Rebind(`INSERT INTO metadata (id, tenant_id, "from", fromdomain, subject, arrived, retained, size,
				message_id, in_reply_to, refs, digest, bodydigest, key_id) VALUES (?, 'acme', ?, ?, '', ?, ?, 10, '', '', '', ?, ?, 'k')`),
				i+1, m.from, m.fromDomain, now, later, m.digest, m.digest)
			require.NoError(t, err)
		}
		for _, r := range [][]any{{1, "b@y.test", "y.test", "to"}, {1, "b@y.test", "y.test", "cc"}, {2, "a@x.test", "x.test", "envelope"}, {3, "b@y.test", "y.test", "bcc"}} {
			_, err := db.Exec(db.Rebind(`INSERT INTO rcpt (id, "to", todomain, kind) VALUES (?, ?, ?, ?)`), r...)
			require.NoError(t, err)
		}
		require.NoError(t, migrations.Up(ctx, db))

		arc := openArchive(t, db)
		for addr, want := range map[string]archive.Scope{
			"a@x.test": {AsSender: 1, AsRecipient: 1, Affected: 2},
			"b@y.test": {AsRecipient: 2, Affected: 2},
			"c@z.test": {AsSender: 1, Affected: 1},
		} {
			got, err := arc.Scope(ctx, "acme", []string{addr})
			require.NoError(t, err)
			assert.Equal(t, want, got, "scope of %s after the migration", addr)
		}
	})
}

// TestAddressRoleMigrationRekeysOldForms: the old columns kept a domain as written
// (Unicode or xn--) and a hold's value as typed; after the migrations both are the rule's
// keys, so a hold placed before the upgrade covers the old mail in either spelling, and
// an erasure request in either spelling finds it.
func TestAddressRoleMigrationRekeysOldForms(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db, now, later := beforeAddressRoles(t, d)
		for i, m := range []struct{ from, fromDomain string }{
			{"jo@bücher.example", "bücher.example"}, {"ann@xn--bcher-kva.example", "xn--bcher-kva.example"},
		} {
			digest := fmt.Sprintf("%02d", i+1)
			_, err := db.Exec(db.Rebind(`INSERT INTO metadata (id, tenant_id, "from", fromdomain, subject, arrived, retained, size,
				message_id, in_reply_to, refs, digest, bodydigest, key_id) VALUES (?, 'acme', ?, ?, '', ?, ?, 10, '', '', '', ?, ?, 'k')`),
				i+1, m.from, m.fromDomain, now, later, digest, digest)
			require.NoError(t, err)
		}
		_, err := db.Exec(db.Rebind(`INSERT INTO rcpt (id, "to", todomain, kind) VALUES (1, 'ann@xn--bcher-kva.example', 'xn--bcher-kva.example', 'to')`))
		require.NoError(t, err)
		for _, h := range [][]any{{"LH-1", "domain", "bücher.example"}, {"LH-2", "address", "jo@xn--bcher-kva.example"}} {
			_, err := db.Exec(db.Rebind(`INSERT INTO legal_holds (id, tenant_id, type, value, reason, matter, status, created_by, created_at)
				VALUES (?, 'acme', ?, ?, 'r', '', 'active', 'dpo', ?)`), append(h, now)...)
			require.NoError(t, err)
		}
		require.NoError(t, migrations.Up(ctx, db))

		var unicode int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM address_role WHERE addr LIKE '%ü%' OR domain LIKE '%ü%'`).Scan(&unicode))
		assert.Zero(t, unicode, "address_role rows keep a Unicode spelling")
		arc := openArchive(t, db)
		for _, addr := range []string{"jo@bücher.example", "jo@xn--bcher-kva.example", "JO@Bücher.Example"} {
			got, holds, _, err := arc.Assess(ctx, "acme", []string{addr})
			require.NoError(t, err)
			assert.Equal(t, archive.Scope{AsSender: 1, Affected: 1}, got, "scope of %s", addr)
			ids := make([]string, len(holds))
			for i, h := range holds {
				ids[i] = h.ID
			}
			assert.ElementsMatch(t, []string{"LH-1", "LH-2"}, ids, "holds covering %s", addr)
		}
		got, err := arc.Scope(ctx, "acme", []string{"ann@bücher.example"})
		require.NoError(t, err)
		assert.Equal(t, archive.Scope{AsSender: 1, AsRecipient: 1, Affected: 2}, got)
	})
}

func openArchive(t *testing.T, db *database.DB) *archive.Archive {
	t.Helper()
	dir := t.TempDir()
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	require.NoError(t, err)
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	require.NoError(t, err)
	return arc
}

// beforeAddressRoles opens a database of dialect d migrated up to the last version
// without address_role, and gives an arrival time and a retention time to write rows with.
func beforeAddressRoles(t *testing.T, d database.Dialect) (db *database.DB, now, later any) {
	t.Helper()
	db = dbtest.OpenUnmigrated(t, d)
	before := int64(6) // the last migration without address_role
	if d == database.MySQL {
		before = 7
	}
	require.NoError(t, migrations.UpTo(context.Background(), db, before))
	return db, database.TimeArg(d, time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)),
		database.TimeArg(d, time.Date(2036, 1, 5, 8, 0, 0, 0, time.UTC))
}

// TestPurgedRolesMigration: the migration that came with purge removing the address roles
// of the messages it deletes removes those a purge left before, and keeps an erased
// message's (a legal hold must find it should its file come back from a backup).
func TestPurgedRolesMigration(t *testing.T) {
	version := map[database.Dialect]int64{database.SQLite: 27, database.Postgres: 30, database.MySQL: 28}
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		ctx := context.Background()
		db := dbtest.Open(t, d)
		arc := openArchive(t, db)
		var batch []*archive.Prepared
		for i := range 4 {
			p, err := arc.Prepare(archive.Incoming{Tenant: "acme", Raw: []byte(fmt.Sprintf(
				"From: a@x.test\r\nTo: b@y.test\r\nSubject: m%d\r\nDate: Mon, 5 Jan 2026 08:00:0%d +0000\r\n\r\nbody\r\n", i, i))})
			require.NoError(t, err)
			batch = append(batch, p)
		}
		res, err := arc.Commit(ctx, batch)
		require.NoError(t, err)
		// What a purge before the change left: a purged message's roles, and an erased one's.
		_, err = db.ExecContext(ctx, db.Rebind(`UPDATE metadata SET deleted = 1 WHERE id = ?`), res[0].ID)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, db.Rebind(`UPDATE metadata SET deleted = 1, erased_by = 'GDPR-2026-00001' WHERE id = ?`), res[1].ID)
		require.NoError(t, err)
		require.NoError(t, migrations.DownTo(ctx, db, version[d]-1))
		require.NoError(t, migrations.Up(ctx, db))
		for i, want := range []int{0, 2, 2, 2} { // a sender's and a recipient's role each
			var n int
			require.NoError(t, db.QueryRowContext(ctx, db.Rebind(`SELECT COUNT(*) FROM address_role WHERE id = ?`), res[i].ID).Scan(&n))
			assert.Equal(t, want, n, "roles of message %d", i)
		}
	})
}
