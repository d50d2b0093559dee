package domain_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/fault"
)

// The domain's errors are of the kinds handlers map: invalid input, a state that refuses.
func TestErrorsAreOfTheirKind(t *testing.T) {
	t.Parallel()
	v := &domain.ValidationError{}
	v.Add("reason", "is required")
	te := &domain.TransitionError{Subject: "hold LH-1", State: "released", Action: "release", Need: "active"}
	cases := []struct {
		err      error
		sentinel error
		kind     fault.Kind
	}{
		{fmt.Errorf("create: %w", v.Err()), domain.ErrValidation, fault.Invalid},
		{fmt.Errorf("release: %w", te), domain.ErrInvalidTransition, fault.Conflict},
	}
	for _, tc := range cases {
		assert.ErrorIs(t, tc.err, tc.sentinel)
		assert.ErrorIs(t, tc.err, tc.kind)
		assert.Equal(t, tc.kind, fault.KindOf(tc.err), "%v", tc.err)
	}
	var fe fault.FieldsError
	if assert.ErrorAs(t, fmt.Errorf("create: %w", v), &fe) {
		assert.Equal(t, map[string]string{"reason": "is required"}, fe.InvalidFields())
	}
	assert.Equal(t, "validation failed", v.Error(), "the text is unchanged")
}
