package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
)

// TestVerificationRecipe runs the Python script and the openssl command of
// docs/verification.md on a real bundle, so that the recipe a regulator follows without
// our code stays right; and checks that the script refuses a changed body.
func TestVerificationRecipe(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"python3", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP: %s is not installed; the documented recipe needs it", tool)
		}
	}
	script := documentedScript(t)
	f := newCertFixture(t, database.SQLite)
	v := f.complete()
	data, err := f.bundle().JSON()
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("verify_bundle.py", script)
	write("bundle.json", string(data))
	write("ledger.pub", f.signer.Key().PublicKey+"\n")
	write("tampered.json", strings.Replace(string(data), "alice@alpha.test", "alice@alpha.tesx", 1))

	out := run(t, dir, "python3", "verify_bundle.py", "bundle.json", "ledger.pub")
	assert.Contains(t, out, "hashes ok: "+v.RequestID)
	assert.Contains(t, out, "hash "+*v.CertificateHash)
	assert.Contains(t, run(t, dir, "openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "ledger.pem", "-rawin",
		"-in", "checkpoint.txt", "-sigfile", "checkpoint.sig"), "Signature Verified Successfully")

	refused := func(why string, args ...string) {
		t.Helper()
		out, err := exec.Command("python3", append([]string{filepath.Join(dir, "verify_bundle.py")}, args...)...).CombinedOutput()
		require.Error(t, err, "the script accepted it: %s", out)
		assert.Contains(t, string(out), "AssertionError: "+why)
	}
	refused("certificate hash", filepath.Join(dir, "tampered.json"), filepath.Join(dir, "ledger.pub"))
	write("extra.json", strings.Replace(string(data), `"format":`, `"note": "trust me", "format":`, 1))
	refused("bundle members", filepath.Join(dir, "extra.json"), filepath.Join(dir, "ledger.pub"))
	refused("checkpoint origin", filepath.Join(dir, "bundle.json"), filepath.Join(dir, "ledger.pub"), "another-log")
	assert.Contains(t, run(t, dir, "python3", "verify_bundle.py", "bundle.json", "ledger.pub", "mailledger"), "hashes ok")
}

// documentedScript returns the Python block of docs/verification.md.
func documentedScript(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "verification.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```python\n")
	require.True(t, ok, "docs/verification.md has a python block")
	script, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	return script
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", name, out)
	return string(out)
}
