package erasure

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain"
)

func TestDeadline(t *testing.T) {
	r := inState(t, StatusPendingApproval)
	assert.Equal(t, t0.Add(30*24*time.Hour), r.DueAt, "due a month after creation")
	assert.False(t, r.Overdue(t0.Add(29*24*time.Hour)))
	assert.True(t, r.Overdue(t0.Add(31*24*time.Hour)))

	ev, err := r.ExtendDeadline("dpo", t0.Add(60*24*time.Hour), "  complex request: two backups to search ")
	require.NoError(t, err)
	assert.Equal(t, &DeadlineExtended{RequestID: r.RequestID, DueAt: t0.Add(60 * 24 * time.Hour), Reason: "complex request: two backups to search", ExtendedBy: "dpo"}, ev)
	version, status := r.Version, r.Status
	r.Apply(ev, t0.Add(time.Hour))
	assert.Equal(t, t0.Add(60*24*time.Hour), r.DueAt)
	assert.Equal(t, status, r.Status, "an extension changes no state")
	assert.Equal(t, version+1, r.Version)
	assert.False(t, r.Overdue(t0.Add(31*24*time.Hour)))

	for name, tc := range map[string]struct {
		until  time.Time
		reason string
		field  string
	}{
		"no reason":             {t0.Add(70 * 24 * time.Hour), " ", "reason"},
		"not later":             {t0.Add(60 * 24 * time.Hour), "again", "due_at"},
		"earlier":               {t0.Add(40 * 24 * time.Hour), "shorter", "due_at"},
		"past three months":     {t0.Add(90*24*time.Hour + time.Second), "too long", "due_at"},
		"reason of 2,001 runes": {t0.Add(70 * 24 * time.Hour), string(make([]rune, 2001)), "reason"},
	} {
		_, err := r.ExtendDeadline("dpo", tc.until, tc.reason)
		var v *domain.ValidationError
		require.True(t, errors.As(err, &v), "%s: %v", name, err)
		assert.Contains(t, v.Fields, tc.field, name)
	}
	_, err = r.ExtendDeadline("dpo", t0.Add(90*24*time.Hour), "the most the law allows")
	assert.NoError(t, err, "exactly three months is allowed")

	for _, s := range []string{StatusCompleted, StatusRejected} {
		_, err := inState(t, s).ExtendDeadline("dpo", t0.Add(60*24*time.Hour), "late")
		assert.ErrorIs(t, err, domain.ErrInvalidTransition, s)
		assert.False(t, inState(t, s).Overdue(t0.Add(365*24*time.Hour)), "%s: nothing is due", s)
	}
}
