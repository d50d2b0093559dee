package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const doc = "# Architecture\n\n## Packages\n\n| a | b |\n|---|---|\n| `x` | `y` |\n\n" +
	"## Import arrows\n\nText before.\n\n" +
	"| package | may import | why |\n|---|---|---|\n" +
	"| `domain/...` | — | pure |\n" +
	"| `archive` | `analyzer`, `database` | stores |\n" +
	"| `bench/...` | `archive`, `database`, `bench/internal/...` | measures |\n" +
	"| `bench/internal/benchenv` | `database` | setup |\n" +
	"\n## Next\n\n| `z` | `w` |\n"

func TestParseTableReadsTheArrowsSectionOnly(t *testing.T) {
	rules, err := parseTable(strings.NewReader(doc))
	require.NoError(t, err)
	var got []string
	for _, r := range rules {
		got = append(got, r.pattern+" -> "+strings.Join(r.allowed, ","))
	}
	assert.Equal(t, []string{"domain/... -> ", "archive -> analyzer,database", "bench/... -> archive,database,bench/internal/...", "bench/internal/benchenv -> database"}, got)
	_, err = parseTable(strings.NewReader("# no table\n"))
	assert.Error(t, err)
}

func TestCheckNamesEveryViolation(t *testing.T) {
	rules, err := parseTable(strings.NewReader(doc))
	require.NoError(t, err)
	const m = "example.com/mod"
	pkgs := []pkg{
		{ImportPath: m + "/domain", Imports: []string{"fmt"}},
		{ImportPath: m + "/domain/erasure", Imports: []string{m + "/domain", m + "/database"}}, // a row allows its own subtree only when it says so
		{ImportPath: m + "/archive", Imports: []string{m + "/analyzer", m + "/app", "strings"}},
		{ImportPath: m + "/bench/scale", Imports: []string{m + "/archive", m + "/bench/internal/benchenv"}},
		{ImportPath: m + "/bench/internal/benchenv", Imports: []string{m + "/database", m + "/archive"}},
		{ImportPath: m + "/handlers", Imports: []string{m + "/app"}},
	}
	assert.Equal(t, []string{
		"domain/erasure imports domain: its row (line 15) does not allow it",
		"domain/erasure imports database: its row (line 15) does not allow it",
		"archive imports app: its row (line 16) does not allow it",
		"bench/internal/benchenv imports archive: its row (line 18) does not allow it",
		"handlers has no row in the table",
	}, check(m, pkgs, rules))
}

func TestCheckNamesARowWithoutPackages(t *testing.T) {
	rules, err := parseTable(strings.NewReader(doc))
	require.NoError(t, err)
	problems := check("m", []pkg{{ImportPath: "m/archive"}}, rules)
	assert.Contains(t, problems, "the row of bench/... (line 17) covers no package")
}
