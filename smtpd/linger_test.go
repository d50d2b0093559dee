package smtpd

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendRaw sends one whole message on c, in one mail transaction, up to the final dot.
func (c *rawClient) sendRaw(id string) {
	c.t.Helper()
	c.cmd("MAIL FROM:<alice@sender.test>", 250)
	c.cmd("RCPT TO:<bob@example.test>", 250)
	c.cmd("DATA", 354)
	c.write(string(message(id, "body of "+id)) + ".\r\n")
}

// The linger is an hour in these tests: a commit that waited for it would leave the
// client without its reply past the raw connection's 30-second deadline.
var hourLinger = map[string]string{"SMTP_COMMIT_LINGER": "1h", "SMTP_STARTTLS": "0"}

func TestACommitDoesNotLingerWhenNoOtherSessionIsInAMailTransaction(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, hourLinger)
	idle := dialRaw(t, r.addr()) // connected, no transaction
	idle.reply()
	idle.cmd("EHLO idle.test", 250)
	reset := dialRaw(t, r.addr()) // a transaction begun, then reset
	reset.reply()
	reset.cmd("EHLO reset.test", 250)
	reset.cmd("MAIL FROM:<alice@sender.test>", 250)
	reset.cmd("RCPT TO:<bob@example.test>", 250)
	reset.cmd("RSET", 250)
	gone := dialRaw(t, r.addr()) // a transaction begun, then the client left
	gone.reply()
	gone.cmd("EHLO gone.test", 250)
	gone.cmd("MAIL FROM:<alice@sender.test>", 250)
	gone.cmd("QUIT", 221)
	_, err := io.ReadAll(gone.conn) // closed by the receiver once the session ended
	require.NoError(t, err)

	sender := dialRaw(t, r.addr())
	sender.reply()
	sender.cmd("EHLO sender.test", 250)
	sender.sendRaw("alone")
	code, text := sender.reply()
	require.Equal(t, 250, code, "answered without the linger: %s", text)
	sender.sendRaw("alone-again") // and the next transaction on the same connection
	code, text = sender.reply()
	require.Equal(t, 250, code, text)
	assert.Equal(t, 2, r.count("default"))
	assert.Equal(t, float64(2), r.metric("mailledger_smtp_commit_batch_messages", ""), "one commit each")
}

func TestACommitLingersForASessionInAMailTransaction(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, hourLinger)
	late := dialRaw(t, r.addr())
	late.reply()
	late.cmd("EHLO late.test", 250)
	late.cmd("MAIL FROM:<alice@sender.test>", 250)
	late.cmd("RCPT TO:<bob@example.test>", 250)
	late.cmd("DATA", 354)
	late.write("Subject: late\r\n\r\nstill arriving\r\n")

	early := dialRaw(t, r.addr())
	early.reply()
	early.cmd("EHLO early.test", 250)
	early.sendRaw("early") // handed over; the commit waits for the late message
	late.write(".\r\n")
	for _, c := range []*rawClient{early, late} {
		code, text := c.reply()
		require.Equal(t, 250, code, text)
	}
	assert.Equal(t, 2, r.count("default"))
	assert.Equal(t, float64(1), r.metric("mailledger_smtp_commit_batch_messages", ""), "both messages in one commit")
}
