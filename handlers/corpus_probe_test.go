package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/domain"
)

// holdProbe finds the messages one active hold covers by the archive's own hold
// condition: it places the hold, runs a purge of every message (a time past every
// retention) whose file deletions it records, and ends the purge's only batch before it
// changes anything, so the transaction rolls back. The messages not offered for deletion
// are the held ones. A message of another tenant, archived last (the highest id, the last
// candidate in id order), stops the batch: its file deletion fails.
type holdProbe struct {
	f     *corpusFixture
	arc   *archive.Archive // the fixture's database and files, with the recording store
	store *recordingStore
	all   []int64
}

// errProbeDone ends the probe's purge batch.
var errProbeDone = errors.New("hold probe: purge batch stopped")

// recordingStore is a BlobStore whose Delete records the key and deletes nothing; the
// stop key fails.
type recordingStore struct {
	archive.BlobStore
	mu      sync.Mutex
	deleted []string
	stop    string
}

func (s *recordingStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == s.stop {
		return errProbeDone
	}
	s.deleted = append(s.deleted, key)
	return nil
}

func newHoldProbe(t *testing.T, f *corpusFixture) *holdProbe {
	t.Helper()
	blobs, err := archive.NewLocalStore(filepath.Join(f.dataDir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(f.dataDir, "keys"))
	require.NoError(t, err)
	p := &holdProbe{f: f, store: &recordingStore{BlobStore: blobs}, all: slices.Sorted(maps.Keys(f.byID))}
	p.arc, err = archive.New(f.db, p.store, keys, archive.Options{})
	require.NoError(t, err)
	const tenant = "zz-probe"
	prepared, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: archivetest.Message("probe@probe.test",
		[]string{"probe@probe.test"}, nil, "probe", "stops the probe's purge", time.Now()), Source: "probe"})
	require.NoError(t, err)
	res, err := f.arc.Commit(t.Context(), []*archive.Prepared{prepared})
	require.NoError(t, err)
	require.Greater(t, res[0].ID, p.all[len(p.all)-1], "the probe's message comes last")
	p.store.stop = archive.MessageKey(tenant, res[0].ID)
	return p
}

// held places an active hold of typ on value, returns the ids of the corpus messages it
// keeps from purge, sorted, and releases it. A hold refused is a failure, and false.
func (p *holdProbe) held(t *testing.T, typ, value string) ([]int64, bool) {
	t.Helper()
	ctx := t.Context()
	h, err := p.f.app.LegalHolds.Place(ctx, app.DefaultTenant, app.PlaceHoldInput{Type: typ, Value: value, Reason: "corpus probe"}, probeActor)
	if !assert.NoError(t, err, "%s hold on %s, a value of the rule: %s", typ, value, validationFields(err)) {
		return nil, false
	}
	require.Equal(t, value, h.Value, "the hold keeps the key")
	defer func() {
		_, err := p.f.app.LegalHolds.Release(ctx, app.DefaultTenant, h.ID, probeActor)
		require.NoError(t, err)
	}()
	p.store.deleted = p.store.deleted[:0]
	_, err = p.arc.Purge(ctx, time.Now().AddDate(100, 0, 0), archive.PurgeOptions{Batch: 1 << 20})
	require.ErrorIs(t, err, errProbeDone, "the purge reached the probe's message")
	offered := map[int64]bool{}
	for _, key := range p.store.deleted {
		offered[p.f.idOfKey(key)] = true
	}
	held := []int64{}
	for _, id := range p.all {
		if !offered[id] {
			held = append(held, id)
		}
	}
	return held, true
}

// idOfKey returns the id in a default-tenant message's storage key.
func (f *corpusFixture) idOfKey(key string) int64 {
	for id := range f.byID {
		if archive.MessageKey(app.DefaultTenant, id) == key {
			return id
		}
	}
	f.t.Fatalf("storage key %s is no corpus message's", key)
	return 0
}

// validationFields returns the fields of a domain.ValidationError ("" for another error).
func validationFields(err error) string {
	if ve, ok := errors.AsType[*domain.ValidationError](err); ok {
		return fmt.Sprint(ve.Fields)
	}
	return ""
}

// probeActor is who places and releases the probe's holds.
var probeActor = domain.Metadata{Actor: "corpus-probe", ClientIP: "127.0.0.1", UserAgent: "test"}
