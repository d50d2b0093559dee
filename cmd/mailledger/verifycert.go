package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/mailledger/mailledger/certificate"
)

const verifyCertificateUsage = `usage: mailledger verify-certificate FILE --public-key KEY [--origin O]

Checks an erasure certificate bundle (GET …/certificate/bundle) offline, with no database
and no configuration. KEY is the ledger's public key in signed-note verifier form
(<name>+<key hash>+<base64 key>, as served at GET /api/v1/ledger/public-key) or a file
holding it. The checkpoint's origin line must be O, by default the key's name (the
service names its key after MAILLEDGER_LEDGER_ORIGIN). Exit 0 when the bundle verifies,
1 naming what is wrong, 2 for bad usage. docs/verification.md describes every check.
`

// verifyCertificateCommand runs `mailledger verify-certificate FILE --public-key KEY` and
// returns its exit code: 0 when the bundle verifies ("certificate ok: <request id>, <n>
// emails deleted, hash <hash>"), 1 when it cannot be read or does not verify (the reason
// on stderr), 2 for usage errors.
func verifyCertificateCommand(args []string, stdout, stderr io.Writer) int {
	a, help, err := parseVerifyCertificateArgs(args)
	if help {
		fmt.Fprint(stdout, verifyCertificateUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %v\n%s", err, verifyCertificateUsage)
		return exitUsage
	}
	key, err := readPublicKey(a.key)
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %v\n", err)
		return exitUsage
	}
	file := a.file
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %v\n", err)
		return exitFailure
	}
	res, err := certificate.VerifyBundleOrigin(data, key, a.origin)
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %s: %s\n", file, oneLine(err))
		return exitFailure
	}
	fmt.Fprintf(stdout, "certificate ok: %s, %d emails deleted, hash %s\n", res.Body.RequestID, res.Body.DeletedCount, res.CertificateHash)
	return 0
}

// verifyCertificateArgs are the arguments of verify-certificate.
type verifyCertificateArgs struct {
	file, key, origin string
}

// parseVerifyCertificateArgs reads FILE, --public-key KEY and --origin O (also with one
// dash, and as --flag=value), in any order.
func parseVerifyCertificateArgs(args []string) (verifyCertificateArgs, bool, error) {
	var a verifyCertificateArgs
	var files []string
	values := map[string]*string{"public-key": &a.key, "origin": &a.origin}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch {
		case isHelpFlag(arg):
			return a, true, nil
		case !strings.HasPrefix(arg, "-"):
			files = append(files, arg)
		case values[name] == nil || strings.HasPrefix(arg, "---"):
			return a, false, fmt.Errorf("unknown flag %s", arg)
		case hasValue:
			*values[name] = value
		case i+1 == len(args):
			return a, false, fmt.Errorf("--%s needs a value", name)
		default:
			i++
			*values[name] = args[i]
		}
	}
	if len(files) != 1 {
		return a, false, fmt.Errorf("want one bundle file, got %d", len(files))
	}
	if a.key == "" {
		return a, false, errors.New("--public-key is required")
	}
	a.file = files[0]
	return a, false, nil
}

// readPublicKey returns the verifier key text: arg itself when it is one, else the
// content of the file arg names.
func readPublicKey(arg string) (string, error) {
	if _, err := note.NewVerifier(arg); err == nil {
		return arg, nil
	}
	raw, err := os.ReadFile(arg)
	if err != nil {
		return "", fmt.Errorf("--public-key %q is neither a signed-note verifier key nor a readable file", arg)
	}
	key := strings.TrimSpace(string(raw))
	if _, err := note.NewVerifier(key); err != nil {
		return "", fmt.Errorf("--public-key file %s holds no signed-note verifier key: %v", arg, err)
	}
	return key, nil
}
