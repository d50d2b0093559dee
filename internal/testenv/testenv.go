// Package testenv builds what the tests of app/ and handlers/ both stand on: the ledger
// (the event store with every projection) and the archive over one migrated database,
// and a checkpoint signer. Only tests import it.
package testenv

import (
	"path/filepath"
	"testing"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// Env is the ledger and the archive over one database; the archive's message files are
// under DataDir/store, its keys under DataDir/keys.
type Env struct {
	DB      *database.DB
	Store   *eventstore.Store
	Archive *archive.Archive
	DataDir string
}

// New returns an Env over a fresh migrated database of dialect d (dbtest.Open), with its
// files under a temporary directory.
func New(t testing.TB, d database.Dialect) *Env {
	t.Helper()
	return Open(t, dbtest.Open(t, d), t.TempDir())
}

// Open returns an Env over db with files and keys under dataDir. Opened again over the
// same db and dataDir, it finds the same messages: a restart.
func Open(t testing.TB, db *database.DB, dataDir string) *Env {
	t.Helper()
	blobs, err := archive.NewLocalStore(filepath.Join(dataDir, "store"))
	if err != nil {
		t.Fatalf("message store: %v", err)
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dataDir, "keys"))
	if err != nil {
		t.Fatalf("archive keys: %v", err)
	}
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	if err != nil {
		t.Fatalf("archive: %v", err)
	}
	return &Env{DB: db, Store: Store(t, db), Archive: arc, DataDir: dataDir}
}

// Store returns the event store over db with every projection.
func Store(t testing.TB, db *database.DB) *eventstore.Store {
	t.Helper()
	store, err := eventstore.New(db, eventstore.Options{Projectors: projections.All()})
	if err != nil {
		t.Fatalf("event store: %v", err)
	}
	return store
}

// Signer returns a signer of store's checkpoints under origin, with a new key.
func Signer(t testing.TB, store *eventstore.Store, origin string) (*eventstore.Signer, *eventstore.Key) {
	t.Helper()
	key, err := eventstore.LoadOrCreateKey(t.TempDir(), origin)
	if err != nil {
		t.Fatalf("ledger key: %v", err)
	}
	signer, err := eventstore.NewSigner(store, key, origin)
	if err != nil {
		t.Fatalf("signer: %v", err)
	}
	return signer, key
}
