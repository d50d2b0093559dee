package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/textproto"

	"github.com/emersion/go-smtp"
	"golang.org/x/sync/errgroup"
)

// The clients -client chooses between.
const (
	// clientPipelined sends as Postfix's SMTP client does with a server that offers
	// PIPELINING (RFC 2920): MAIL, RCPT and DATA in one write, the replies read together,
	// then the message. Its DATA bytes are dot-stuffed once, before the clock starts (an
	// MTA's queue file is written before delivery), so the clients' CPU during the run is
	// the protocol's, not a byte-at-a-time transformation in this process.
	clientPipelined = "pipelined"
	// clientGoSMTP sends with go-smtp's client: each command awaits its reply, and the
	// message is dot-stuffed while it is sent, on the same 2 cores as the receiver.
	clientGoSMTP = "go-smtp"
)

// Envelope of every benchmark message.
const (
	benchSender    = "bench@sender.test"
	benchRecipient = "archive@example.test"
)

// sendAll sends msgs to addr on clients connections at once; each client takes the next
// message once the previous one got its 250.
func sendAll(ctx context.Context, addr string, msgs [][]byte, clients int, kind string) error {
	if kind == clientPipelined {
		wire := make([][]byte, len(msgs))
		for i, m := range msgs {
			var err error
			if wire[i], err = dotStuffed(m); err != nil {
				return err
			}
		}
		msgs = wire
	}
	g, ctx := errgroup.WithContext(ctx)
	next := make(chan []byte)
	for n := range clients {
		helo := fmt.Sprintf("client%d.smtpbench.test", n)
		g.Go(func() error {
			if kind == clientPipelined {
				return sendPipelined(addr, helo, next)
			}
			return sendEach(addr, helo, next)
		})
	}
	g.Go(func() error {
		defer close(next)
		for _, m := range msgs {
			select {
			case next <- m:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}

// sendEach sends every message it receives from next on one connection with go-smtp's
// client.
func sendEach(addr, helo string, next <-chan []byte) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Hello(helo); err != nil {
		return err
	}
	for m := range next {
		if err := c.SendMail(benchSender, []string{benchRecipient}, bytes.NewReader(m)); err != nil {
			return fmt.Errorf("%s: %w", helo, err)
		}
	}
	return c.Quit()
}

// dotStuffed is m as it travels after DATA: lines ending in CRLF, a leading dot doubled,
// and the terminating "." line; the bytes go-smtp's client (net/textproto's DotWriter)
// sends for m.
func dotStuffed(m []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := textproto.NewWriter(bufio.NewWriter(&buf))
	dw := w.DotWriter()
	if _, err := dw.Write(m); err != nil {
		return nil, err
	}
	if err := dw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sendPipelined sends every message it receives from next (dot-stuffed, dotStuffed) on
// one connection, pipelining MAIL, RCPT and DATA.
func sendPipelined(addr, helo string, next <-chan []byte) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	r := textproto.NewReader(bufio.NewReader(conn))
	if _, _, err := r.ReadResponse(220); err != nil {
		return fmt.Errorf("%s: greeting: %w", helo, err)
	}
	if _, err := fmt.Fprintf(conn, "EHLO %s\r\n", helo); err != nil {
		return err
	}
	if _, ext, err := r.ReadResponse(250); err != nil {
		return fmt.Errorf("%s: EHLO: %w", helo, err)
	} else if !bytes.Contains([]byte(ext), []byte("PIPELINING")) {
		return fmt.Errorf("%s: the receiver does not offer PIPELINING", helo)
	}
	envelope := []byte("MAIL FROM:<" + benchSender + ">\r\nRCPT TO:<" + benchRecipient + ">\r\nDATA\r\n")
	for m := range next {
		if _, err := conn.Write(envelope); err != nil {
			return err
		}
		for _, want := range []int{250, 250, 354} {
			if _, msg, err := r.ReadResponse(want); err != nil {
				return fmt.Errorf("%s: envelope: %w (%s)", helo, err, msg)
			}
		}
		if _, err := conn.Write(m); err != nil {
			return err
		}
		if _, msg, err := r.ReadResponse(250); err != nil {
			return fmt.Errorf("%s: message: %w (%s)", helo, err, msg)
		}
	}
	if _, err := conn.Write([]byte("QUIT\r\n")); err != nil {
		return err
	}
	_, _, err = r.ReadResponse(221)
	return err
}
