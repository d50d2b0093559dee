package fault_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/domain/fault"
)

// Rule 1: a sentinel keeps its text and is of its kind, wrapped or not.
func TestNewKeepsTextAndKind(t *testing.T) {
	t.Parallel()
	errMissing := fault.New(fault.NotFound, "message not found")
	wrapped := fmt.Errorf("message 7: %w", errMissing)
	assert.Equal(t, "message not found", errMissing.Error())
	assert.ErrorIs(t, wrapped, errMissing)
	assert.ErrorIs(t, wrapped, fault.NotFound)
	assert.NotErrorIs(t, wrapped, fault.Conflict)
	assert.NotErrorIs(t, errMissing, fault.New(fault.NotFound, "message not found"), "sentinels compare by identity")
	assert.Equal(t, fault.NotFound, fault.KindOf(wrapped))
}

// Rule 2: two %w keep both the kind and the cause.
func TestWrappedErrorKeepsKindAndCause(t *testing.T) {
	t.Parallel()
	errKeys := fault.New(fault.Unavailable, "archive keyring")
	cases := []struct {
		name string
		err  error
		kind fault.Kind
	}{
		{"a kind and a cause", fmt.Errorf("%w: %w", fault.Integrity, fs.ErrNotExist), fault.Integrity},
		{"a sentinel and a cause", fmt.Errorf("%w: read keys: %w", errKeys, fs.ErrNotExist), fault.Unavailable},
		{"wrapped again", fmt.Errorf("open: %w", fmt.Errorf("%w: %w", errKeys, fs.ErrNotExist)), fault.Unavailable},
	}
	for _, tc := range cases {
		assert.ErrorIs(t, tc.err, tc.kind, "%s: got %v; want its kind", tc.name, tc.err)
		assert.ErrorIs(t, tc.err, fs.ErrNotExist, "%s: got %v; want its cause", tc.name, tc.err)
		assert.Equal(t, tc.kind, fault.KindOf(tc.err), tc.name)
	}
}

// Rule 3: the first kind in the chain decides.
func TestKindOfTakesTheFirstKind(t *testing.T) {
	t.Parallel()
	errNotAvailable := fault.New(fault.Conflict, "certificate not available")
	cause := fmt.Errorf("%w: request x", fault.New(fault.NotFound, "not found"))
	assert.Equal(t, fault.Conflict, fault.KindOf(fmt.Errorf("%w: %w", errNotAvailable, cause)))
	assert.Equal(t, fault.NotFound, fault.KindOf(fmt.Errorf("load: %w", cause)))
	assert.Equal(t, fault.Other, fault.KindOf(errors.New("boom")), "an error without a kind")
	assert.Equal(t, fault.Other, fault.KindOf(nil))
}

func TestEveryKindHasAName(t *testing.T) {
	t.Parallel()
	seen := map[string]fault.Kind{}
	for _, k := range fault.Kinds() {
		name := k.Error()
		assert.NotEqual(t, "unknown kind", name, "kind %d has no name", k)
		if prev, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d are both named %q", prev, k, name)
		}
		seen[name] = k
	}
	assert.Equal(t, fault.Other, fault.Kinds()[0], "Other is the zero kind")
	assert.Equal(t, "unknown kind", fault.Kind(255).Error())
}
