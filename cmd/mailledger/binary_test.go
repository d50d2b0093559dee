package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// binary is the mailledger binary that TestMain builds once for every test, in binaryDir,
// which TestMain removes at the end (other binaries built for tests go there too).
var binary, binaryDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mailledger-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, binaryDir = filepath.Join(dir, "mailledger"), dir
	build := exec.Command("go", "build", "-o", binary, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	testAdmin    = "auditor-admin"
	testPassword = "s3cret-Passw0rd"
)

// baseEnv is the environment of a test run: a fresh data dir (0700, as mailledger makes
// it, so that no run logs tightening it), the bootstrap admin, and nothing inherited from
// the test's own environment but PATH.
func baseEnv(t *testing.T) map[string]string {
	t.Helper()
	dataDir := t.TempDir()
	require.NoError(t, os.Chmod(dataDir, 0o700))
	return map[string]string{
		"PATH":                       os.Getenv("PATH"),
		"MAILLEDGER_DATA_DIR":        dataDir,
		"MAILLEDGER_BOOTSTRAP_ADMIN": testAdmin + ":" + testPassword,
	}
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// result is the outcome of one finished command.
type result struct {
	stdout, stderr string
	code           int
}

// runBinary runs mailledger with args and env and waits for it to exit.
func runBinary(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return runProgram(t, binary, env, args...)
}

// runProgram runs the program bin with args and env and waits for it to exit.
func runProgram(t *testing.T, bin string, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = envList(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		require.True(t, ok, "run %v: %v", args, err)
		code = exitErr.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// lockedBuffer is a bytes.Buffer that a running process writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a running `mailledger serve`.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *lockedBuffer
	exited chan error
}

// startServe starts `mailledger serve` on a free port; it is killed after the test if
// it is still running.
func startServe(t *testing.T, env map[string]string) *server {
	t.Helper()
	addr := freeAddr(t)
	env["HTTP_ADDR"] = addr
	if env["SMTP_ADDR"] == "" {
		env["SMTP_ADDR"] = freeAddr(t)
	}
	s := &server{t: t, base: "http://" + addr, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	s.cmd = exec.Command(binary, "serve")
	s.cmd.Env = envList(env)
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, s.stderr
	require.NoError(t, s.cmd.Start())
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		if t.Failed() {
			t.Logf("serve stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// get requests path, with the bootstrap admin's credentials when auth is set.
func (s *server) get(path string, auth bool) (int, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	require.NoError(s.t, err)
	if auth {
		req.SetBasicAuth(testAdmin, testPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, string(body)
}

// waitFor polls path until it answers status, failing after d.
func (s *server) waitFor(path string, status int, d time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		got, body := s.get(path, false)
		if got == status {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: got %d %s; want %d within %s", path, got, body, status, d)
		}
		select {
		case err := <-s.exited:
			s.t.Fatalf("serve exited early: %v\n%s", err, s.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and requires exit code 0 within d.
func (s *server) stop(d time.Duration) {
	s.t.Helper()
	require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.exited:
		require.NoError(s.t, err, "serve must exit 0 after SIGTERM")
	case <-time.After(d):
		s.t.Fatalf("serve did not exit within %s of SIGTERM", d)
	}
}

// logLines returns serve's stderr lines, requiring each to be a JSON object.
func (s *server) logLines() []string {
	s.t.Helper()
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		require.True(s.t, json.Valid([]byte(line)), "log line is not JSON: %q", line)
		lines = append(lines, line)
	}
	return lines
}
