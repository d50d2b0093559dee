package app

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/domain/legalhold"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/projections"
)

// newHoldRepository is a repository of legal holds over a fresh SQLite ledger.
func newHoldRepository(t *testing.T) *repository[legalhold.Hold, *legalhold.Hold] {
	t.Helper()
	store, err := eventstore.New(dbtest.Open(t, database.SQLite), eventstore.Options{Projectors: projections.All()})
	require.NoError(t, err)
	return &repository[legalhold.Hold, *legalhold.Hold]{store: store, noun: "legal hold",
		streamType: legalhold.StreamType, streamID: legalhold.StreamID, decode: legalhold.Decode}
}

func placeEvent(t *testing.T, id string) domain.Event {
	t.Helper()
	ev, err := legalhold.PlaceHold(legalhold.Place{ID: id, TenantID: "t1", Type: legalhold.TypeDomain,
		Value: "alpha.test", Reason: "litigation", Actor: "admin"})
	require.NoError(t, err)
	return ev
}

func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestRepositoryLoadOfAnEmptyStreamIsNotFound(t *testing.T) {
	t.Parallel()
	repo := newHoldRepository(t)
	h, err := repo.load(t.Context(), AllTenants, "LH-none")
	assert.Nil(t, h)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, fault.NotFound, fault.KindOf(err), "got kind %v; want not found", fault.KindOf(err))
}

func TestRepositoryLoadReplaysTheStreamOfTheTenant(t *testing.T) {
	t.Parallel()
	ctx, repo := t.Context(), newHoldRepository(t)
	_, err := repo.append(ctx, nil, repo.stream("LH-1", "t1"), eventstore.NoStream, actorMD("admin"), placeEvent(t, "LH-1"))
	require.NoError(t, err)

	h, err := repo.load(ctx, "t1", "LH-1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), h.Version, "got version %d; want 1", h.Version)
	assert.Equal(t, legalhold.StatusActive, h.Status)
	_, err = repo.load(ctx, "t2", "LH-1")
	assert.ErrorIs(t, err, ErrNotFound, "another tenant's hold; got %v", err)
}

func TestRepositoryAppendAtAStaleVersionIsAConflict(t *testing.T) {
	t.Parallel()
	ctx, repo := t.Context(), newHoldRepository(t)
	_, err := repo.append(ctx, nil, repo.stream("LH-1", "t1"), eventstore.NoStream, actorMD("admin"), placeEvent(t, "LH-1"))
	require.NoError(t, err)
	stale, err := repo.load(ctx, "t1", "LH-1")
	require.NoError(t, err)
	fresh, err := repo.load(ctx, "t1", "LH-1")
	require.NoError(t, err)

	release(t, repo, fresh)
	ev, err := stale.Release("other")
	require.NoError(t, err)
	_, err = repo.append(ctx, stale, repo.stream("LH-1", "t1"), stale.Version, actorMD("other"), ev)
	assert.ErrorIs(t, err, eventstore.ErrConcurrentModification)
	assert.Equal(t, fault.Conflict, fault.KindOf(err), "got kind %v; want conflict", fault.KindOf(err))
	assert.Equal(t, legalhold.StatusActive, stale.Status, "a refused event is not applied")
}

// release appends h's release and checks that append applied it to h.
func release(t *testing.T, repo *repository[legalhold.Hold, *legalhold.Hold], h *legalhold.Hold) {
	t.Helper()
	ev, err := h.Release("admin")
	require.NoError(t, err)
	_, err = repo.append(t.Context(), h, repo.stream(h.ID, h.TenantID), h.Version, actorMD("admin"), ev)
	require.NoError(t, err)
	assert.Equal(t, legalhold.StatusReleased, h.Status)
	assert.Equal(t, int64(2), h.Version, "got version %d; want 2", h.Version)
}

func TestRepositoryWakesSubscribersOnlyAfterACommit(t *testing.T) {
	t.Parallel()
	ctx, repo := t.Context(), newHoldRepository(t)
	appended := repo.store.Appended()
	err := inLedgerTx(ctx, repo.store, func(tx *ledgerTx) error {
		_, err := repo.appendTx(ctx, tx, nil, repo.stream("LH-1", "t1"), eventstore.NoStream, actorMD("admin"), placeEvent(t, "LH-1"))
		assert.False(t, woken(appended), "woken before the commit")
		return err
	})
	require.NoError(t, err)
	assert.True(t, woken(appended), "not woken after the commit")

	appended = repo.store.Appended()
	errRollBack := errors.New("roll back")
	err = inLedgerTx(ctx, repo.store, func(tx *ledgerTx) error {
		if _, err := repo.appendTx(ctx, tx, nil, repo.stream("LH-2", "t1"), eventstore.NoStream, actorMD("admin"), placeEvent(t, "LH-2")); err != nil {
			return err
		}
		return errRollBack
	})
	require.ErrorIs(t, err, errRollBack)
	assert.False(t, woken(appended), "woken after a rollback")
	_, err = repo.load(ctx, AllTenants, "LH-2")
	assert.ErrorIs(t, err, ErrNotFound, "the rolled-back hold; got %v", err)
}

func TestRepositoryLoadTxSeesTheTransactionsAppends(t *testing.T) {
	t.Parallel()
	ctx, repo := t.Context(), newHoldRepository(t)
	err := inLedgerTx(ctx, repo.store, func(tx *ledgerTx) error {
		if _, err := repo.appendTx(ctx, tx, nil, repo.stream("LH-1", "t1"), eventstore.NoStream, actorMD("admin"), placeEvent(t, "LH-1")); err != nil {
			return err
		}
		h, err := repo.loadTx(ctx, tx, "t1", "LH-1")
		if err != nil {
			return err
		}
		assert.Equal(t, int64(1), h.Version, "got version %d; want 1", h.Version)
		return nil
	})
	require.NoError(t, err)
}

func actorMD(name string) domain.Metadata { return domain.Metadata{Actor: name} }
