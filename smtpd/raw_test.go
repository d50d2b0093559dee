package smtpd

import (
	"bufio"
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawClient speaks SMTP on a bare connection, for what smtplib cannot do (BDAT).
type rawClient struct {
	t    *testing.T
	conn net.Conn
	text *textproto.Conn
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	return &rawClient{t: t, conn: conn, text: textproto.NewConn(conn)}
}

// reply reads one (possibly multi-line) reply and returns its code and last line.
func (c *rawClient) reply() (int, string) {
	c.t.Helper()
	for {
		line, err := c.text.ReadLine()
		require.NoError(c.t, err)
		require.GreaterOrEqual(c.t, len(line), 4, "reply %q", line)
		if line[3] == ' ' {
			var code int
			_, err := fmt.Sscanf(line[:3], "%d", &code)
			require.NoError(c.t, err)
			return code, line
		}
	}
}

func (c *rawClient) write(s string) {
	c.t.Helper()
	_, err := c.conn.Write([]byte(s))
	require.NoError(c.t, err)
}

// cmd sends one command and requires the reply code want.
func (c *rawClient) cmd(line string, want int) string {
	c.t.Helper()
	c.write(line + "\r\n")
	code, text := c.reply()
	require.Equal(c.t, want, code, "%s: %s", line, text)
	return text
}

// dialEHLO dials the receiver, reads its greeting and says EHLO.
func dialEHLO(t *testing.T, addr string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.reply()
	c.cmd("EHLO raw.test", 250)
	return c
}

// envelope sends MAIL and RCPT for a message from alice to bob.
func (c *rawClient) envelope() {
	c.t.Helper()
	c.cmd("MAIL FROM:<alice@sender.test>", 250)
	c.cmd("RCPT TO:<bob@example.test>", 250)
}

// startData sends the envelope and DATA, whose 354 it requires.
func (c *rawClient) startData() {
	c.t.Helper()
	c.envelope()
	c.cmd("DATA", 354)
}

func TestBDATChunksAreArchivedAsOneMessage(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	c := dialRaw(t, r.addr())
	code, _ := c.reply()
	require.Equal(t, 220, code)
	ehlo := c.cmd("EHLO raw.test", 250)
	_ = ehlo
	c.cmd("MAIL FROM:<alice@sender.test>", 250)
	c.cmd("RCPT TO:<bob@example.test>", 250)
	msg := message("bdat-1", "First chunk and\r\n.a dot line, kept as is in BDAT\r\nthe end.")
	first, second := msg[:40], msg[40:]
	c.write(fmt.Sprintf("BDAT %d\r\n%s", len(first), first))
	code, text := c.reply()
	require.Equal(t, 250, code, text)
	c.write(fmt.Sprintf("BDAT %d LAST\r\n%s", len(second), second))
	code, text = c.reply()
	require.Equal(t, 250, code, text)
	assert.Contains(t, text, "Archived default/")
	c.cmd("QUIT", 221)
	ids := r.ids("default")
	require.Len(t, ids, 1)
	assert.Equal(t, string(msg), string(r.raw("default", ids[0])))
}

func TestBDATOverTheSizeLimitGets552BeforeTheChunkIsKept(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_MAX_MESSAGE_BYTES": "1000"})
	c := dialEHLO(t, r.addr())
	c.envelope()
	body := strings.Repeat(strings.Repeat("x", 98)+"\r\n", 20)
	c.write(fmt.Sprintf("BDAT %d LAST\r\n%s", len(body), body))
	code, text := c.reply()
	assert.Equal(t, 552, code, text)
	assert.Equal(t, 0, r.count("default"))
}

func TestPipelinedCommandsAreAnsweredInOrder(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	c := dialRaw(t, r.addr())
	c.reply()
	c.cmd("EHLO raw.test", 250)
	msg := message("pipe-1", "pipelined")
	// RFC 2920: MAIL, RCPT… and DATA in one write; the message after the 354.
	c.write("MAIL FROM:<alice@sender.test>\r\nRCPT TO:<bob@example.test>\r\nRCPT TO:<carol@example.test>\r\nDATA\r\n")
	for _, want := range []int{250, 250, 250, 354} {
		code, text := c.reply()
		require.Equal(t, want, code, text)
	}
	c.write(string(msg) + ".\r\nQUIT\r\n")
	code, text := c.reply()
	require.Equal(t, 250, code, text)
	code, _ = c.reply()
	assert.Equal(t, 221, code)
	assert.Equal(t, 1, r.count("default"))
}

func TestIdleConnectionIsClosedWith421(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_IDLE_TIMEOUT": "300ms"})
	c := dialRaw(t, r.addr())
	c.reply()
	c.cmd("EHLO raw.test", 250)
	start := time.Now()
	code, text := c.reply() // nothing sent: the server gives up
	assert.Equal(t, 421, code, text)
	assert.Less(t, time.Since(start), 5*time.Second)
	_, err := bufio.NewReader(c.conn).ReadByte()
	assert.Error(t, err, "closed after the 421")
}

func TestStalledMessageIsCutAtTheIdleTimeout(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_IDLE_TIMEOUT": "300ms"})
	c := dialEHLO(t, r.addr())
	c.startData()
	c.write("Subject: half\r\n") // and then nothing
	_, err := c.text.ReadLine()
	for err == nil { // go-smtp may answer before it closes
		_, err = c.text.ReadLine()
	}
	assert.Equal(t, 0, r.count("default"))
}

func TestConnectionsOverThePerIPLimitGet421(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_MAX_CONNECTIONS_PER_IP": "2"})
	for i := 0; i < 2; i++ {
		c := dialRaw(t, r.addr())
		code, _ := c.reply()
		require.Equal(t, 220, code)
	}
	c := dialRaw(t, r.addr())
	code, text := c.reply()
	assert.Equal(t, 421, code, text)
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_refused_total", refusedConnections))
}

func TestTricklingMessageIsCutAtTheDataTimeout(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, map[string]string{"SMTP_IDLE_TIMEOUT": "300ms", "SMTP_DATA_TIMEOUT": "1s"})
	c := dialEHLO(t, r.addr())
	c.startData()
	c.write("Subject: trickle\r\n\r\n")
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a line every 100 ms: never idle for 300 ms
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.conn.Write([]byte("more\r\n")); err != nil {
					return
				}
			}
		}
	}()
	_, err := c.text.ReadLine()
	for err == nil {
		_, err = c.text.ReadLine()
	}
	elapsed := time.Since(start)
	assert.GreaterOrEqual(t, elapsed, 900*time.Millisecond, "not cut by the idle timeout")
	assert.Less(t, elapsed, 5*time.Second, "cut by the data timeout")
	assert.Equal(t, 0, r.count("default"))
}

// TestMessagesAroundTheReadChunkReadBackWhole: messages shorter than, as long as and
// longer than the chunks a message is read in (readChunk), sent in small writes, are
// stored whole and byte-identical.
func TestMessagesAroundTheReadChunkReadBackWhole(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	c := dialEHLO(t, r.addr())
	head := "From: alice@sender.test\r\nTo: bob@example.test\r\nSubject: size\r\n\r\n"
	var want [][]byte
	for i, size := range []int{0, 1, readChunk - len(head) - 2, readChunk - len(head), readChunk + 1, 3*readChunk + 17} {
		var body strings.Builder
		for body.Len() < size {
			fmt.Fprintf(&body, "line %d of message %d\r\n", body.Len(), i)
		}
		msg := head + body.String()[:size]
		if !strings.HasSuffix(msg, "\r\n") {
			msg += "\r\n"
		}
		c.startData()
		for rest := msg + ".\r\n"; rest != ""; {
			n := min(len(rest), 1000)
			c.write(rest[:n])
			rest = rest[n:]
		}
		code, text := c.reply()
		require.Equal(t, 250, code, "message %d: %s", i, text)
		want = append(want, []byte(msg))
	}
	ids := r.ids("default")
	require.Len(t, ids, len(want))
	for i, id := range ids {
		assert.Equal(t, want[i], r.raw("default", id), "message %d", i)
	}
}

// TestConnectionDroppedInDataStoresNothing: a client gone in the middle of a message (the
// end-of-data line never came) leaves nothing in the archive, whatever the read chunks.
func TestConnectionDroppedInDataStoresNothing(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, nil)
	for _, size := range []int{100, readChunk, readChunk + 100} {
		c := dialEHLO(t, r.addr())
		c.startData()
		c.write("From: alice@sender.test\r\nSubject: cut\r\n\r\n" + strings.Repeat("x", size) + "\r\n")
		require.NoError(t, c.conn.Close())
	}
	// A whole message after them: once it has its 250, the cut ones were read and refused
	// long before (their connections closed first).
	c := dialEHLO(t, r.addr())
	c.startData()
	c.write("From: alice@sender.test\r\nSubject: whole\r\n\r\nwhole\r\n.\r\n")
	code, text := c.reply()
	require.Equal(t, 250, code, text)
	ids := r.ids("default")
	require.Len(t, ids, 1, "only the whole message is stored")
	assert.Contains(t, string(r.raw("default", ids[0])), "Subject: whole")
	assert.Equal(t, 1.0, r.metric("mailledger_smtp_received_total", ""))
}
