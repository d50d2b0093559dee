package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/emersion/go-smtp"
	"golang.org/x/sync/errgroup"
)

// sendAll sends msgs to addr on clients connections at once; each client takes the next
// message once the previous one got its 250.
func sendAll(ctx context.Context, addr string, msgs [][]byte, clients int) error {
	g, ctx := errgroup.WithContext(ctx)
	next := make(chan []byte)
	for n := range clients {
		g.Go(func() error { return sendEach(addr, fmt.Sprintf("client%d.smtpbench.test", n), next) })
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

// sendEach sends every message it receives from next on one connection.
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
		if err := c.SendMail("bench@sender.test", []string{"archive@example.test"}, bytes.NewReader(m)); err != nil {
			return fmt.Errorf("%s: %w", helo, err)
		}
	}
	return c.Quit()
}
