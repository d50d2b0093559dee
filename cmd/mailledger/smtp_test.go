package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitForSMTP polls SMTP_ADDR until serve's receiver greets, failing after d.
func (s *server) waitForSMTP(addr string, d time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			line := make([]byte, 3)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = c.Read(line)
			c.Close()
			if err == nil && string(line) == "220" {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("SMTP_ADDR %s does not greet within %s: %v", addr, d, err)
		}
		select {
		case err := <-s.exited:
			s.t.Fatalf("serve exited early: %v\n%s", err, s.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// acked is a message that got a 250, and the id the 250 named.
type acked struct {
	id  string
	raw []byte
}

// sendUntilFailure sends messages on one connection until a send fails (the server was
// killed) and reports each one acknowledged with 250 to ack.
func sendUntilFailure(addr string, client int, ack func(acked)) {
	c, err := smtp.Dial(addr)
	if err != nil {
		return
	}
	defer c.Close()
	if c.Hello("crash.test") != nil {
		return
	}
	for i := 0; ; i++ {
		raw := []byte(fmt.Sprintf("From: a@sender.test\r\nTo: b@example.test\r\nSubject: crash %d-%d\r\n"+
			"Message-ID: <crash-%d-%d@sender.test>\r\n\r\nbody %d of client %d\r\n%s\r\n", client, i, client, i, i, client,
			strings.Repeat("filler line of the crash test\r\n", i%50)))
		id, err := sendOne(c, raw)
		if err != nil {
			return
		}
		ack(acked{id: id, raw: raw})
	}
}

// sendOne sends raw and returns the id that the 250 names ("Archived default/ID").
func sendOne(c *smtp.Client, raw []byte) (string, error) {
	if err := c.Mail("a@sender.test", nil); err != nil {
		return "", err
	}
	if err := c.Rcpt("b@example.test", nil); err != nil {
		return "", err
	}
	w, err := c.Data()
	if err != nil {
		return "", err
	}
	if _, err := w.Write(raw); err != nil {
		return "", err
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", err
	}
	_, id, ok := strings.Cut(resp.StatusText, "Archived default/")
	if !ok {
		return "", fmt.Errorf("250 without an id: %q", resp.StatusText)
	}
	return strings.Fields(id)[0], nil
}

// TestSMTPMessagesAcknowledgedBeforeAKillSurviveIt: concurrent clients send to `mailledger
// serve`, which is killed with SIGKILL mid-run; after a restart every message that got a
// 250 reads back byte-identical through GET /api/v1/messages/{id}/raw.
func TestSMTPMessagesAcknowledgedBeforeAKillSurviveIt(t *testing.T) {
	killMidSMTPAndReadBack(t, baseEnv(t))
}

// TestSMTPMessagesAcknowledgedBeforeAKillSurviveItInS3Mode: the same in S3 mode, where a
// commit's files are staged as one batch and uploaded after it: every acknowledged
// message reads back after the restart, whether its file was still staged or uploaded.
func TestSMTPMessagesAcknowledgedBeforeAKillSurviveItInS3Mode(t *testing.T) {
	env := baseEnv(t)
	s3Env(t, env)
	killMidSMTPAndReadBack(t, env)
}

// killMidSMTPAndReadBack runs `mailledger serve` on env, has 8 clients send to it until
// 150 messages are acknowledged, kills it with SIGKILL while they still send, restarts it
// and reads every acknowledged message back.
func killMidSMTPAndReadBack(t *testing.T, env map[string]string) {
	smtpAddr := freeAddr(t)
	env["SMTP_ADDR"] = smtpAddr
	s := startServe(t, env)
	s.waitForSMTP(smtpAddr, 60*time.Second)
	var mu sync.Mutex
	var got []acked
	enough := make(chan struct{})
	ack := func(a acked) {
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, a); len(got) == 150 {
			close(enough)
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); sendUntilFailure(smtpAddr, i, ack) }()
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
		t.Fatal("150 messages were not acknowledged within 2 minutes")
	}
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGKILL)) // mid-run: the clients are still sending
	<-s.exited
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	restarted := startServe(t, env)
	restarted.waitFor("/readyz", http.StatusOK, 60*time.Second)
	for _, a := range got {
		code, body := restarted.get("/api/v1/messages/"+a.id+"/raw", true)
		require.Equal(t, http.StatusOK, code, "message %s: %s", a.id, body)
		assert.True(t, bytes.Equal(a.raw, []byte(body)), "message %s reads back byte-identical", a.id)
	}
	t.Logf("%d messages acknowledged before the kill, all read back", len(got))
	restarted.stop(10 * time.Second)
}
