package legalhold

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain"
)

func TestRule1TypeAndValue(t *testing.T) {
	cases := []struct {
		typ, value, wantValue, badField string
	}{
		{TypeAddress, " Alice@Example.COM ", "alice@example.com", ""},
		{TypeAddress, `"John Doe"@Example.com`, `"john doe"@example.com`, ""}, // a quoted local part that needs its quotes
		{TypeAddress, "jörg@xn--bcher-kva.example", "jörg@xn--bcher-kva.example", ""},
		{TypeAddress, "not an address", "", "value"},
		{TypeAddress, "Alice <alice@example.com>", "", "value"},
		{TypeDomain, "Example.com", "example.com", ""},
		{TypeDomain, "@example.com", "example.com", ""},
		// Every domain an address key of the rule can have is holdable: a hold blocks
		// exactly what an erasure would delete.
		{TypeDomain, "localhost", "localhost", ""},
		{TypeDomain, "-odd.example", "-odd.example", ""},
		{TypeDomain, "[192.0.2.1]", "[192.0.2.1]", ""},
		{TypeDomain, "bad..com", "", "value"},
		{TypeDomain, ".com", "", "value"},
		{TypeDomain, "a b.com", "", "value"},
		{TypeDomain, "a@b.com", "", "value"},
		{TypeDomain, "[]", "", "value"},
		{"mailbox", "a@b.c", "", "type"},
	}
	for _, c := range cases {
		ev, err := PlaceHold(Place{ID: "LH-1", Type: c.typ, Value: c.value, Reason: "litigation"})
		if c.badField != "" {
			var v *domain.ValidationError
			require.True(t, errors.As(err, &v), "%s %q: got %v; want a validation error", c.typ, c.value, err)
			assert.Contains(t, v.Fields, c.badField)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.wantValue, ev.Value)
	}
}

func TestRule2ReasonAndMatter(t *testing.T) {
	for _, c := range []struct {
		reason, matter, badField string
	}{
		{"", "", "reason"},
		{"   ", "", "reason"},
		{strings.Repeat("x", 2001), "", "reason"},
		{strings.Repeat("x", 2000), strings.Repeat("m", 255), ""},
		{"ok", strings.Repeat("m", 256), "matter"},
	} {
		_, err := PlaceHold(Place{ID: "LH-1", Type: TypeDomain, Value: "example.com", Reason: c.reason, Matter: c.matter})
		if c.badField == "" {
			assert.NoError(t, err)
			continue
		}
		var v *domain.ValidationError
		require.True(t, errors.As(err, &v), "got %v; want a validation error on %s", err, c.badField)
		assert.Contains(t, v.Fields, c.badField)
	}
}

func TestRule3ReleaseOnlyFromActive(t *testing.T) {
	placed, err := PlaceHold(Place{ID: "LH-1", TenantID: "t", Type: TypeAddress, Value: "a@b.test", Reason: "r", Actor: "auditor"})
	require.NoError(t, err)
	var h Hold
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h.Apply(placed, now)
	assert.Equal(t, StatusActive, h.Status)
	rel, err := h.Release("admin")
	require.NoError(t, err)
	h.Apply(rel, now.Add(time.Hour))
	assert.Equal(t, StatusReleased, h.Status)
	assert.Equal(t, "admin", h.ReleasedBy)
	assert.Equal(t, int64(2), h.Version)
	_, err = h.Release("admin")
	assert.ErrorIs(t, err, domain.ErrInvalidTransition, "second release; got %v", err)
}

func TestDecodeRoundTrip(t *testing.T) {
	e, err := Decode(EventPlaced, []byte(`{"id":"LH-1","tenant_id":"t","type":"domain","value":"x.test","reason":"r","matter":"","created_by":"a"}`))
	require.NoError(t, err)
	assert.Equal(t, "x.test", e.(*Placed).Value)
	_, err = Decode("legalhold.unknown", nil)
	assert.Error(t, err)
}
