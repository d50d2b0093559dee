package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryCommandAnswersHelp: each command and subcommand given -h or --help prints its
// own usage on stdout and exits 0, without reading the configuration or a database.
func TestEveryCommandAnswersHelp(t *testing.T) {
	env := baseEnv(t)
	env["DATABASE_URL"] = "nonsense" // help must not need a configuration
	commands := [][]string{
		{"serve"}, {"migrate"}, {"import"}, {"user"}, {"user", "add"}, {"verify"},
		{"projections"}, {"projections", "rebuild"}, {"purge"}, {"verify-certificate"}, {"help"},
	}
	for _, cmd := range commands {
		for _, flag := range []string{"-h", "--help", "-help"} {
			name := strings.Join(cmd, " ")
			r := runBinary(t, env, append(append([]string{}, cmd...), flag)...)
			assert.Equal(t, 0, r.code, "%s %s: stderr %s", name, flag, r.stderr)
			assert.Empty(t, r.stderr, "%s %s", name, flag)
			want := "usage: mailledger " + name
			if name == "help" {
				want = "usage: mailledger <command>"
			}
			assert.True(t, strings.HasPrefix(r.stdout, want), "%s %s: stdout %q; want it to start with %q", name, flag, r.stdout, want)
		}
	}
}

// TestHelpNamesACommand: `mailledger help COMMAND` prints that command's usage.
func TestHelpNamesACommand(t *testing.T) {
	env := baseEnv(t)
	for _, name := range []string{"import", "purge", "user add", "verify-certificate"} {
		r := runBinary(t, env, append([]string{"help"}, strings.Fields(name)...)...)
		assert.Equal(t, 0, r.code, "help %s: stderr %s", name, r.stderr)
		assert.True(t, strings.HasPrefix(r.stdout, "usage: mailledger "+name), "help %s: %q", name, r.stdout)
	}
	r := runBinary(t, env, "help", "nothing")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, lastLine(r.stderr), `unknown command "nothing"`)
}

// TestUnknownCommandSuggestsTheNearest: a misspelt command names the nearest one by
// edit distance; a word far from every command gets no suggestion.
func TestUnknownCommandSuggestsTheNearest(t *testing.T) {
	env := baseEnv(t)
	cases := []struct{ args, want string }{
		{"verfy", `unknown command "verfy"; did you mean "verify"?`},
		{"improt x.eml", `unknown command "improt"; did you mean "import"?`},
		{"verify-certficate", `unknown command "verify-certficate"; did you mean "verify-certificate"?`},
		{"serv", `unknown command "serv"; did you mean "serve"?`},
		{"purg", `unknown command "purg"; did you mean "purge"?`},
		{"users add", `unknown command "users"; did you mean "user"?`},
		{"frobnicate", `unknown command "frobnicate"; run 'mailledger help' for the list`},
		{"user remove", `unknown command "user remove"; did you mean "user add"?`},
		{"projections rebuilt", `unknown command "projections rebuilt"; did you mean "projections rebuild"?`},
	}
	for _, c := range cases {
		r := runBinary(t, env, strings.Fields(c.args)...)
		assert.Equal(t, 2, r.code, c.args)
		assert.Equal(t, "mailledger: "+c.want, lastLine(r.stderr), c.args)
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"verify", "verify", 0}, {"", "abc", 3}, {"verfy", "verify", 1},
		{"improt", "import", 1}, {"kitten", "sitting", 3}, {"serve", "purge", 3},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, editDistance(c.a, c.b), "editDistance(%q, %q)", c.a, c.b)
	}
}
