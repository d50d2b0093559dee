package smarthost_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/internal/smtpsink"
	"github.com/mailledger/mailledger/smarthost"
)

const original = "From: Alice <alice@example.com>\r\nTo: bob@example.com\r\nSubject: minutes\r\n\r\nThe minutes.\r\n.leading dot\r\n"

func send(t *testing.T, cfg smarthost.Config, to string) error {
	t.Helper()
	c, err := smarthost.New(cfg)
	require.NoError(t, err)
	return c.Send(context.Background(), to, strings.NewReader(original))
}

func TestSendPlain(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{})
	require.NoError(t, send(t, smarthost.Config{Addr: sink.Addr}, "bob@example.com"))
	got := sink.Messages()
	require.Len(t, got, 1)
	assert.Equal(t, original, string(got[0].Data), "the bytes arrive unchanged (a leading dot unstuffed)")
	assert.Equal(t, []string{"bob@example.com"}, got[0].To)
	assert.Empty(t, got[0].From, "the null sender: a restore never bounces to the original sender")
	assert.False(t, got[0].TLS)
}

func TestSendOverSTARTTLS(t *testing.T) {
	t.Parallel()
	tlsCfg, pool := smtpsink.SelfSigned(t)
	sink := smtpsink.Start(t, smtpsink.Options{TLS: tlsCfg, Users: map[string]string{"archive": "s3cret"}})

	t.Run("opportunistic, unverified without credentials", func(t *testing.T) {
		require.NoError(t, send(t, smarthost.Config{Addr: sink.Addr, From: "archive@example.com"}, "bob@example.com"))
		got := sink.Messages()
		require.NotEmpty(t, got)
		assert.True(t, got[len(got)-1].TLS)
		assert.Equal(t, "archive@example.com", got[len(got)-1].From)
	})
	t.Run("credentials need a verified certificate", func(t *testing.T) {
		err := send(t, smarthost.Config{Addr: sink.Addr, Username: "archive", Password: "s3cret"}, "bob@example.com")
		require.ErrorIs(t, err, smarthost.ErrRefused)
		assert.ErrorContains(t, err, "certificate")
		assert.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("credentials with the CA", func(t *testing.T) {
		require.NoError(t, send(t, smarthost.Config{Addr: sink.Addr, Username: "archive", Password: "s3cret", RootCAs: pool}, "bob@example.com"))
		got := sink.Messages()
		assert.Equal(t, "archive", got[len(got)-1].User)
	})
	t.Run("wrong password", func(t *testing.T) {
		err := send(t, smarthost.Config{Addr: sink.Addr, Username: "archive", Password: "nope", RootCAs: pool}, "bob@example.com")
		require.ErrorIs(t, err, smarthost.ErrRefused)
		assert.ErrorContains(t, err, "auth")
	})
	t.Run("required, verified", func(t *testing.T) {
		require.NoError(t, send(t, smarthost.Config{Addr: sink.Addr, StartTLS: smarthost.Required, RootCAs: pool}, "bob@example.com"))
		err := send(t, smarthost.Config{Addr: sink.Addr, StartTLS: smarthost.Required, RootCAs: x509.NewCertPool()}, "bob@example.com")
		assert.ErrorIs(t, err, smarthost.ErrRefused, "an untrusted certificate")
	})
}

func TestSendRefusals(t *testing.T) {
	t.Parallel()
	plain := smtpsink.Start(t, smtpsink.Options{RejectRcpt: []string{"nobody@example.com"}})
	err := send(t, smarthost.Config{Addr: plain.Addr}, "nobody@example.com")
	require.ErrorIs(t, err, smarthost.ErrRefused)
	assert.ErrorContains(t, err, "550")
	assert.Empty(t, plain.Messages())

	err = send(t, smarthost.Config{Addr: plain.Addr, StartTLS: smarthost.Required}, "bob@example.com")
	assert.ErrorContains(t, err, "does not offer STARTTLS")

	err = send(t, smarthost.Config{Addr: "127.0.0.1:1"}, "bob@example.com")
	assert.ErrorIs(t, err, smarthost.ErrRefused, "nothing listens")
}

func TestSendIsBoundedInTime(t *testing.T) {
	t.Parallel()
	ln := silentServer(t)
	c, err := smarthost.New(smarthost.Config{Addr: ln, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	err = c.Send(context.Background(), "bob@example.com", bytes.NewReader([]byte(original)))
	require.ErrorIs(t, err, smarthost.ErrRefused)
	assert.Less(t, time.Since(start), 5*time.Second, "a smarthost that never greets is given up")
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	err := smarthost.Config{Addr: "relay", StartTLS: "maybe", Username: "u", From: "<a@b>"}.Validate()
	require.ErrorIs(t, err, smarthost.ErrConfig)
	for _, want := range []string{"SMARTHOST_ADDR", "SMARTHOST_STARTTLS", "SMARTHOST_USER and SMARTHOST_PASSWORD", "SMARTHOST_FROM"} {
		assert.ErrorContains(t, err, want)
	}
	require.NoError(t, smarthost.Config{Addr: "relay.example:25"}.Validate())
}

// failingReader gives some bytes of a message, then an error (a file that fails its
// integrity check at the end of the read).
type failingReader struct{ sent bool }

var errBroken = errors.New("the file failed its check")

func (f *failingReader) Read(b []byte) (int, error) {
	if f.sent {
		return 0, errBroken
	}
	f.sent = true
	return copy(b, "From: a@example.com\r\nSubject: half\r\n\r\nthe first half\r\n"), nil
}

func TestSendAbandonsAMessageThatFailsToRead(t *testing.T) {
	t.Parallel()
	sink := smtpsink.Start(t, smtpsink.Options{})
	c, err := smarthost.New(smarthost.Config{Addr: sink.Addr})
	require.NoError(t, err)
	err = c.Send(context.Background(), "bob@example.com", &failingReader{})
	require.ErrorIs(t, err, errBroken, "the cause is kept")
	require.ErrorIs(t, err, smarthost.ErrRefused)
	assert.Empty(t, sink.Messages(), "no part of a message is delivered")
}
