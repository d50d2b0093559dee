package smtpd

import (
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// sendRaw sends one whole message on c, in one mail transaction, up to the final dot.
func (c *rawClient) sendRaw(id string) {
	c.t.Helper()
	c.cmd("MAIL FROM:<alice@sender.test>", 250)
	c.cmd("RCPT TO:<bob@example.test>", 250)
	c.cmd("DATA", 354)
	c.write(string(message(id, "body of "+id)) + ".\r\n")
}

// greeted is a raw connection past its EHLO: an open session.
func greeted(t *testing.T, r *receiver, name string) *rawClient {
	c := dialRaw(t, r.addr())
	c.reply()
	c.cmd("EHLO "+name+".test", 250)
	return c
}

// The linger is an hour in these tests: a commit that waited for it would leave the
// client without its reply past the raw connection's 30-second deadline.
var hourLinger = map[string]string{"SMTP_COMMIT_LINGER": "1h", "SMTP_STARTTLS": "0"}

func TestACommitDoesNotLingerWhenEverySessionsMessageIsInIt(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, hourLinger)
	gone := greeted(t, r, "gone") // a session that ended: not counted
	gone.cmd("MAIL FROM:<alice@sender.test>", 250)
	gone.cmd("QUIT", 221)
	_, err := io.ReadAll(gone.conn) // closed by the receiver once the session ended
	require.NoError(t, err)

	sender := greeted(t, r, "sender")
	sender.sendRaw("alone")
	code, text := sender.reply()
	require.Equal(t, 250, code, "answered without the linger: %s", text)
	sender.sendRaw("alone-again") // and the next message on the same connection
	code, text = sender.reply()
	require.Equal(t, 250, code, text)
	assert.Equal(t, 2, r.count("default"))
	assert.Equal(t, float64(2), r.metric("mailledger_smtp_commit_batch_messages", ""), "one commit each")
}

func TestACommitLingersForAnotherSessionsMessage(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, hourLinger)
	late := greeted(t, r, "late")
	late.cmd("MAIL FROM:<alice@sender.test>", 250)
	late.cmd("RCPT TO:<bob@example.test>", 250)
	late.cmd("DATA", 354)
	late.write("Subject: late\r\n\r\nstill arriving\r\n")

	early := greeted(t, r, "early")
	early.sendRaw("early") // handed over; the commit waits for the late message
	late.write(".\r\n")
	for _, c := range []*rawClient{early, late} {
		code, text := c.reply()
		require.Equal(t, 250, code, text)
	}
	assert.Equal(t, 2, r.count("default"))
	assert.Equal(t, float64(1), r.metric("mailledger_smtp_commit_batch_messages", ""), "both messages in one commit")
}

// Eight clients each send a message at once: the commit waits for all eight and starts
// as soon as the last is in.
func TestACommitTakesEveryConnectedClientsMessageThenStarts(t *testing.T) {
	t.Parallel()
	const clients = 8
	r := startReceiver(t, hourLinger)
	conns := make([]*rawClient, clients)
	for i := range conns {
		conns[i] = greeted(t, r, fmt.Sprint("client", i))
	}
	var g errgroup.Group
	for i, c := range conns {
		g.Go(func() error {
			c.write("MAIL FROM:<alice@sender.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n") // pipelined
			for _, want := range []int{250, 250, 354} {
				if code, text := c.reply(); code != want {
					return fmt.Errorf("client %d: want %d, got %s", i, want, text)
				}
			}
			c.write(string(message(fmt.Sprint("m", i), "body")) + ".\r\n")
			if code, text := c.reply(); code != 250 {
				return fmt.Errorf("client %d: %s", i, text)
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	assert.Equal(t, clients, r.count("default"))
	assert.Equal(t, float64(1), r.metric("mailledger_smtp_commit_batch_messages", ""), "one commit of all eight")
}
