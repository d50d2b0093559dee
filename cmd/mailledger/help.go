package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// commandHelp is the usage of one command: its name as typed ("user add") and the text
// that `mailledger NAME --help` and `mailledger help NAME` print.
type commandHelp struct {
	name, usage string
}

// commandHelps lists every command; a top-level command comes before its subcommands.
var commandHelps = []commandHelp{
	{"serve", `usage: mailledger serve

Runs the service: the HTTP API on HTTP_ADDR (docs/api.md), the SMTP receiver on
SMTP_ADDR and the background work (the erasure assessor and executor, the export
scheduler, checkpoint signing, the purge schedule). Migrates the database first. Stops
cleanly on SIGTERM or Ctrl-C: no new connections, messages being received finish their
commit. The configuration comes from the environment: mailledger help,
docs/operations.md.
`},
	{"migrate", `usage: mailledger migrate

Applies the database schema to DATABASE_URL and exits; prints "migrated <dialect>
database to version N". serve does the same at start.
`},
	{"import", importUsage + `

Archives each PATH: an .eml file, an mbox file (mbox, *.mbox, *.mbx), a maildir, or a
directory walked recursively, into tenant T (default "default"). A file that fails is
printed on stderr as "FILE: reason" and the import goes on; stdout gets one line,
"imported N, duplicates D, failed F". Exit 0 when every file was archived or a
duplicate, 1 when any failed, 2 for bad arguments.
`},
	{"user", userAddUsage + "\n\nuser has one subcommand, add: see mailledger user add --help.\n"},
	{"user add", userAddUsage + `

Creates a user with a bcrypt password hash. --role admin (domain local: a global
administrator), auditor, or user (sees only mail to or from --email). --domain defaults
to local; with MULTITENANCY=1 it is the user's tenant. Exit 1 when the name is taken.
`},
	{"verify", `usage: mailledger verify

Re-hashes the whole ledger (hash chain, Merkle tree, stored tree nodes and signed
checkpoints) with the ledger's public key; prints "ledger ok: N events, head <hash>", or
exits 1 naming the first bad position.
`},
	{"projections", projectionsUsage + "\n\nprojections has one subcommand, rebuild: see mailledger projections rebuild --help.\n"},
	{"projections rebuild", projectionsUsage + `

Empties every projection table (the tables built from ledger events) and replays the
whole ledger into them; prints "projections rebuilt: N events replayed".
`},
	{"purge", `usage: mailledger purge

One purge pass, then exit: deletes the files of the mail past its retention (erased mail
included) that no active legal hold keeps, and records each batch in the ledger. Prints
"purged N messages, H held back by legal holds". serve runs the same pass every
MAILLEDGER_PURGE_INTERVAL.
`},
	{"reindex", `usage: mailledger reindex

Re-reads every stored message (decrypted in memory; the sealed files are never
rewritten) and rebuilds what the archive derives from it: its search terms, its address
roles, its sender and recipients as shown, and its date. Needed after an upgrade whose notes say so (docs/operations.md). It
may run while serve runs: search, erasure and import go on, and the messages reindexed so
far are found by the new rules. Shows a progress bar; killed, it resumes where it stopped
when run again. A completed run is recorded in the ledger (archive.reindexed, counts
only). Prints "reindexed N messages, F could not be read"; each message that cannot be
read is named on stderr, left as it was, and makes the exit code 1.
`},
	{"erasures", erasuresUsage + "\n\nerasures has one subcommand, reapply: see mailledger erasures reapply --help.\n"},
	{"erasures reapply", erasuresUsage + `

Applies every completed erasure in the ledger again: after the database's archive tables
or the message store were restored from a backup older than some erasures, the messages
of an erasure's scope dated before its execution that are visible again are erased again
(retained until today, out of search; an active legal hold still keeps them), and the
files of erased messages that are back in the store go at the next purge. One
erasure.reapplied event records what was found. Prints "reapplied erasures: R found
something, E messages erased again, F files back for the next purge". serve runs it at
start when a completed erasure has no message marked with its id.
`},
	{"verify-certificate", verifyCertificateUsage},
	{"pdfservice", pdfserviceUsage},
	{"help", usage},
}

const projectionsUsage = "usage: mailledger projections rebuild"

// helpFor returns the usage of the command named by words ("user", "add"), or nil.
func helpFor(words ...string) *commandHelp {
	name := strings.Join(words, " ")
	for i := range commandHelps {
		if commandHelps[i].name == name {
			return &commandHelps[i]
		}
	}
	return nil
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// printHelp prints the usage of the command named by words: `mailledger help [COMMAND]`.
func (env *environment) printHelp(words []string) error {
	if len(words) == 0 {
		fmt.Fprint(env.stdout, usage)
		return nil
	}
	h := helpFor(words...)
	if h == nil {
		return unknownCommand(strings.Join(words, " "), words[:1])
	}
	fmt.Fprint(env.stdout, h.usage)
	return nil
}

// unknownCommand is the usage error for a command that does not exist; typed holds the
// words that were given (the command, or the command and its subcommand). It names the
// nearest command when one is close.
func unknownCommand(typed string, words []string) error {
	msg := fmt.Sprintf("unknown command %q", typed)
	if near := nearestCommand(words); near != "" {
		return usageError(fmt.Errorf("%s; did you mean %q?", msg, near))
	}
	return usageError(errors.New(msg + "; run 'mailledger help' for the list"))
}

// nearestCommand returns the command closest to words by edit distance: among the
// subcommands of words[0] when it is a command, else among the top-level commands. It
// returns "" when no top-level command is within about a third of the typed name's
// length.
func nearestCommand(words []string) string {
	typed, prefix, bestDist := words[0], "", len(words[0])/3+2
	if len(words) > 1 && helpFor(words[0]) != nil { // a known command: its nearest subcommand
		typed, prefix, bestDist = words[1], words[0]+" ", math.MaxInt
	}
	best := ""
	for _, h := range commandHelps {
		rest, ok := strings.CutPrefix(h.name, prefix)
		if !ok || strings.Contains(rest, " ") || rest == "help" {
			continue
		}
		if d := editDistance(typed, rest); d < bestDist {
			best, bestDist = h.name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b: insertions,
// deletions, substitutions and transpositions of adjacent characters cost 1 each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
