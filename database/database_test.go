package database

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenRejectsBadURLsWithoutLeakingPasswords(t *testing.T) {
	for _, raw := range []string{
		"postgres://user:hunter2@host:5432/db%zz",
		"mysql://user:hunter2@tcp(host:3306",
		"oracle://user:hunter2@host/db",
		"no-scheme-hunter2",
		"sqlite://",
	} {
		_, err := Open(raw)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("%q: got %v; want ErrBadURL", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error %q shows the password", raw, err)
		}
	}
}

func TestRebind(t *testing.T) {
	got := Rebind(Postgres, "SELECT a FROM t WHERE b = ? AND c IN (?, ?)")
	if want := "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := Rebind(MySQL, "x = ?"); got != "x = ?" {
		t.Errorf("mysql: got %q", got)
	}
}

func TestPlaceholders(t *testing.T) {
	if got, want := Placeholders(2, 3), "(?, ?, ?), (?, ?, ?)"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if got, want := InList(3), "?, ?, ?"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := Rebind(Postgres, "IN ("+InList(2)+")"); got != "IN ($1, $2)" {
		t.Errorf("rebound: got %q", got)
	}
}
