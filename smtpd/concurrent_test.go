package smtpd

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// sendMany sends n messages on one connection with go-smtp's client; ids name them.
func sendMany(addr, client string, n int) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Hello(client + ".test"); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		msg := message(fmt.Sprintf("%s-%d", client, i), "message "+fmt.Sprint(i)+" of "+client)
		if err := c.SendMail("alice@sender.test", []string{"bob@example.test"}, bytes.NewReader(msg)); err != nil {
			return fmt.Errorf("%s message %d: %w", client, i, err)
		}
	}
	return c.Quit()
}

func TestConcurrentClientsAreArchivedOnceEachInGroupCommits(t *testing.T) {
	t.Parallel()
	const clients, each = 20, 50
	r := startReceiver(t, nil)
	var g errgroup.Group
	for i := 0; i < clients; i++ {
		g.Go(func() error { return sendMany(r.addr(), fmt.Sprintf("client%02d", i), each) })
	}
	require.NoError(t, g.Wait())
	assert.Equal(t, clients*each, r.count("default"))
	var distinct int
	require.NoError(t, r.db.QueryRowContext(context.Background(),
		`SELECT COUNT(DISTINCT message_id) FROM metadata`).Scan(&distinct))
	assert.Equal(t, clients*each, distinct, "every message once")
	commits := r.metric("mailledger_smtp_commit_batch_messages", "")
	assert.Less(t, commits, float64(clients*each), "group commit: fewer commits than messages")
	assert.Equal(t, float64(clients*each), r.metric("mailledger_smtp_stored_total", ""))
	t.Logf("%d messages in %v commits", clients*each, commits)
}

func TestShutdownLetsAMessageInDATAFinishAndEndsIdleConnections(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	idle := dialRaw(t, r.addr())
	idle.reply()
	idle.cmd("EHLO idle.test", 250)
	busy := dialRaw(t, r.addr())
	busy.reply()
	busy.cmd("EHLO busy.test", 250)
	busy.cmd("MAIL FROM:<alice@sender.test>", 250)
	busy.cmd("RCPT TO:<bob@example.test>", 250)
	busy.cmd("DATA", 354)
	busy.write("Subject: in flight\r\n")
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- r.srv.Shutdown(ctx)
	}()
	code, text := idle.reply() // the idle connection is ended at once
	assert.Equal(t, 421, code, text)
	busy.write("\r\nstill arriving\r\n.\r\n")
	code, text = busy.reply()
	require.Equal(t, 250, code, "the message in DATA is finished: %s", text)
	code, _ = busy.reply()
	assert.Equal(t, 421, code, "then the connection is ended")
	require.NoError(t, <-stopped)
	assert.Equal(t, 1, r.count("default"))
}

// TestSeveralCommittersArchiveEachMessageOnce: with four group commits at once, on each
// database, 12 clients send 30 messages each, and every message is archived once; pairs
// of clients send the same messages at the same moment (as a client retrying a message
// whose 250 it never saw, while the first copy is still being committed): each gets its
// 250 and the message is stored once, whichever commit took it first.
func TestSeveralCommittersArchiveEachMessageOnce(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		const clients, each = 12, 30
		r := startReceiverOn(t, d, nil, archive.Options{}, func(c *Config, _ *database.DB) { c.Committers = 4 })
		var g errgroup.Group
		for i := 0; i < clients; i++ {
			// clients 2k and 2k+1 send the same messages
			g.Go(func() error { return sendMany(r.addr(), fmt.Sprintf("pair%02d", i/2), each) })
		}
		require.NoError(t, g.Wait(), "every message got its 250")
		assert.Equal(t, clients/2*each, r.count("default"), "each message of a pair stored once")
		var distinct int
		require.NoError(t, r.db.QueryRowContext(context.Background(),
			`SELECT COUNT(DISTINCT message_id) FROM metadata`).Scan(&distinct))
		assert.Equal(t, clients/2*each, distinct)
		assert.Equal(t, float64(clients/2*each), r.metric("mailledger_smtp_stored_total", ""))
		assert.Equal(t, float64(clients/2*each), r.metric("mailledger_smtp_duplicates_total", ""), "the other copy of each pair is a duplicate")
	})
}
