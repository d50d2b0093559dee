package smtpd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// swaks sends the message in file with swaks (args add to the server, sender, recipient
// and data) and returns its transcript; it requires swaks to exit 0.
func (r *receiver) swaks(msg []byte, args ...string) string {
	r.t.Helper()
	requireTool(r.t, "swaks")
	file := filepath.Join(r.t.TempDir(), "msg.eml")
	// swaks ends the data with "\r\n.\r\n" whatever the file ends with, so the file
	// holds the message without its last line break.
	require.NoError(r.t, os.WriteFile(file, bytes.TrimSuffix(msg, []byte("\r\n")), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all := append([]string{"--server", "127.0.0.1", "--port", strconv.Itoa(r.port), "--helo", "swaks.test",
		"--from", "alice@sender.test", "--to", "bob@example.test", "--data", "@" + file}, args...)
	out, err := exec.CommandContext(ctx, "swaks", all...).CombinedOutput()
	require.NoError(r.t, err, "swaks: %s", out)
	return string(out)
}

func TestSwaksPipelining(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("swaks-pipe-1", "pipelined by swaks")
	out := r.swaks(msg, "--pipeline")
	assert.Contains(t, out, "<-  250 2.0.0 Archived default/")
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, msg, r.raw("default", ids[0]))
}

func TestSwaksStartTLSWithoutVerifying(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	msg := message("swaks-tls-1", "over TLS by swaks")
	out := r.swaks(msg, "--tls")
	assert.Contains(t, out, "TLS started")
	assert.Contains(t, out, "250 2.0.0 Archived default/")
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, msg, r.raw("default", ids[0]))
}
