package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"time"

	"github.com/mailledger/mailledger/pdfservice"
)

const pdfserviceUsage = `usage: mailledger pdfservice [--addr HOST:PORT] [--chromium PATH] [--concurrent N] [--timeout D]

Serves PDF rendering on --addr (127.0.0.1:3000) with Gotenberg's route, POST
/forms/chromium/convert/html, rendering with the local headless Chromium (Debian's or
Ubuntu's chromium package; --chromium names another) through the DevTools protocol:
set PDFSERVICE_URL=http://127.0.0.1:3000 for serve and the certificates' PDFs need no
Docker. At most --concurrent (2) renderings at a time, each within --timeout (1m). The
pages run no JavaScript and reach no network. GET /health answers while Chromium runs.
No configuration or database is read. Stops on SIGTERM or Ctrl-C.
`

// pdfserviceCommand runs `mailledger pdfservice` until ctx ends and returns its exit code.
func pdfserviceCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pdfservice", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:3000", "")
	chromium := fs.String("chromium", "", "")
	concurrent := fs.Int("concurrent", pdfservice.DefaultConcurrent, "")
	timeout := fs.Duration("timeout", pdfservice.DefaultTimeout, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, pdfserviceUsage)
			return 0
		}
		fmt.Fprintf(stderr, "mailledger pdfservice: %v\n%s", err, pdfserviceUsage)
		return exitUsage
	}
	if *concurrent < 1 || *timeout <= 0 || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mailledger pdfservice: --concurrent must be 1 or more, --timeout positive, and no arguments\n%s", pdfserviceUsage)
		return exitUsage
	}
	if err := servePDF(ctx, *addr, *chromium, *concurrent, *timeout, stderr); err != nil {
		fmt.Fprintf(stderr, "mailledger pdfservice: %s\n", oneLine(err))
		return exitFailure
	}
	return 0
}

func servePDF(ctx context.Context, addr, chromium string, concurrent int, timeout time.Duration, stderr io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	if chromium == "" {
		path, err := findChromium()
		if err != nil {
			return err
		}
		chromium = path
	}
	svc, err := pdfservice.New(pdfservice.Config{Chromium: chromium, Concurrent: concurrent, Timeout: timeout, Logger: logger})
	if err != nil {
		return err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: svc, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: timeout + time.Minute}
	logger.Info("pdfservice listening", "addr", ln.Addr().String(), "chromium", chromium)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return srv.Shutdown(sctx)
}

// findChromium is the chromium of the system: chromium, else chromium-browser.
func findChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errors.New("chromium is not installed (apt-get install chromium), or name it with --chromium")
}
