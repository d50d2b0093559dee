package analyzer

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"John.Doe@Example.COM", "john.doe@example.com"},
		{"  jdoe@example.com\t", "jdoe@example.com"},
		{`"john"@example.com`, "john@example.com"},
		{`"john doe"@example.com`, `"john doe"@example.com`},
		{`"John Doe"@Example.com`, `"john doe"@example.com`},
		{`"a\"b"@x.example`, `"a\"b"@x.example`},
		{"a@bücher.example", "a@xn--bcher-kva.example"},
		{"a@xn--bcher-kva.example", "a@xn--bcher-kva.example"},
		{"jdöe@mächine.example", "jdöe@xn--mchine-bua.example"},
		{"jdoe@test . example", "jdoe@test.example"},
		{"john.(comment)doe@example.com", "john.doe@example.com"},
		{"u@[192.0.2.1]", "u@[192.0.2.1]"},
		{"user@my_host.example", "user@my_host.example"},
		{"postmaster@localhost", "postmaster@localhost"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if assert.NoError(t, err, "Normalize(%q)", tt.in) {
			assert.Equal(t, tt.want, got, "Normalize(%q)", tt.in)
		}
	}
}

func TestNormalizeRejectsWithAReason(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, reason string }{
		{"", "empty"},
		{"   ", "empty"},
		{"john", "no domain"},
		{"@example.com", "no local part"},
		{"john@", "no domain"},
		{"a@b@c.example", "more than"},
		{"John <j@x.example>", "bare address"},
		{"<j@x.example>", "bare address"},
		{"a@x.example, b@y.example", "more than one"},
		{"john doe@example.com", "outside"},
		{`"unclosed@example.com`, "unclosed"},
		{"a@(unclosed example.com", "unclosed"},
		{"a@[1.2.3.4", "unclosed"},
		{"team: a@x.example;", "group"},
		{"a@" + strings.Repeat("x", MaxKeyBytes) + ".example", "longer than"},
	}
	for _, tt := range tests {
		_, err := Normalize(tt.in)
		if assert.Error(t, err, "Normalize(%q)", tt.in) {
			assert.True(t, errors.Is(err, ErrInvalidAddress), "Normalize(%q): %v is not ErrInvalidAddress", tt.in, err)
			assert.Contains(t, err.Error(), tt.reason, "Normalize(%q)", tt.in)
		}
	}
}

func TestNormalizeEqualsParseListKey(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`"john"@x.example`, `"john doe"@example.com`, "A@Bücher.Example", "a@xn--bcher-kva.example",
		`"a\"b"@x.example`, "abc..def.@docomo.example", "jdöe@mächine.example", "u@[IPv6:2001:DB8::1]",
	} {
		ms := ParseList(raw)
		require.Len(t, ms, 1, raw)
		key, err := Normalize(raw)
		require.NoError(t, err, raw)
		assert.Equal(t, ms[0].Key, key, raw)
		again, err := Normalize(key)
		require.NoError(t, err, key)
		assert.Equal(t, key, again, "Normalize is idempotent on %q", key)
	}
}

func TestDomainOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ key, want string }{
		{"a@example.com", "example.com"},
		{`"a@b"@x.example`, "x.example"},
		{`"a\"@b"@x.example`, "x.example"},
		{"u@[192.0.2.1]", "[192.0.2.1]"},
		{"nodomain", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DomainOf(tt.key), "DomainOf(%q)", tt.key)
	}
}

func TestNormalizeDomain(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Example.COM", "example.com"},
		{"@example.com", "example.com"},
		{"Bücher.example", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"example.com.", "example.com"},
		{"[192.0.2.1]", "[192.0.2.1]"},
	}
	for _, tt := range tests {
		got, err := NormalizeDomain(tt.in)
		if assert.NoError(t, err, tt.in) {
			assert.Equal(t, tt.want, got, "NormalizeDomain(%q)", tt.in)
		}
	}
	for _, bad := range []string{"", "@", "a b.example", "a@b.example", "a,b", "<x>", ".", "a..b"} {
		_, err := NormalizeDomain(bad)
		assert.ErrorIs(t, err, ErrInvalidAddress, "NormalizeDomain(%q)", bad)
	}
	got, err := NormalizeDomain("Bücher.example")
	require.NoError(t, err)
	assert.Equal(t, DomainOf(ParseList("x@bücher.example")[0].Key), got)
}
