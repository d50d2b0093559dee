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

const verifyCertificateUsage = `usage: mailledger verify-certificate FILE --public-key KEY

Checks an erasure certificate bundle (GET …/certificate/bundle) offline, with no database
and no configuration. KEY is the ledger's public key in signed-note verifier form
(<name>+<key hash>+<base64 key>, as served at GET /api/v1/ledger/public-key) or a file
holding it. Exit 0 when the bundle verifies, 1 naming what is wrong, 2 for bad usage.
`

// verifyCertificateCommand runs `mailledger verify-certificate FILE --public-key KEY` and
// returns its exit code: 0 when the bundle verifies ("certificate ok: <request id>, <n>
// emails deleted, hash <hash>"), 1 when it cannot be read or does not verify (the reason
// on stderr), 2 for usage errors.
func verifyCertificateCommand(args []string, stdout, stderr io.Writer) int {
	file, keyArg, help, err := parseVerifyCertificateArgs(args)
	if help {
		fmt.Fprint(stdout, verifyCertificateUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %v\n%s", err, verifyCertificateUsage)
		return exitUsage
	}
	key, err := readPublicKey(keyArg)
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %v\n", err)
		return exitUsage
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %v\n", err)
		return exitFailure
	}
	res, err := certificate.VerifyBundle(data, key)
	if err != nil {
		fmt.Fprintf(stderr, "mailledger verify-certificate: %s: %s\n", file, oneLine(err))
		return exitFailure
	}
	fmt.Fprintf(stdout, "certificate ok: %s, %d emails deleted, hash %s\n", res.Body.RequestID, res.Body.DeletedCount, res.CertificateHash)
	return 0
}

// parseVerifyCertificateArgs reads FILE and --public-key KEY (also -public-key, and
// --public-key=KEY), in any order.
func parseVerifyCertificateArgs(args []string) (file, key string, help bool, err error) {
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			return "", "", true, nil
		case a == "--public-key" || a == "-public-key":
			if i+1 == len(args) {
				return "", "", false, errors.New("--public-key needs a value")
			}
			i++
			key = args[i]
		case strings.HasPrefix(a, "--public-key=") || strings.HasPrefix(a, "-public-key="):
			_, key, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-"):
			return "", "", false, fmt.Errorf("unknown flag %s", a)
		default:
			files = append(files, a)
		}
	}
	if len(files) != 1 {
		return "", "", false, fmt.Errorf("want one bundle file, got %d", len(files))
	}
	if key == "" {
		return "", "", false, errors.New("--public-key is required")
	}
	return files[0], key, false, nil
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
