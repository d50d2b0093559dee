package main

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/certificate/render/pdftest"
)

// TestPDFServiceCommand runs `mailledger pdfservice` as the binary's run does, renders a
// page through it as the certificates' PDF client would, and stops it with its context.
func TestPDFServiceCommand(t *testing.T) {
	pdftest.Require(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"pdfservice", "--addr", addr, "--concurrent", "1"}, func(string) string { return "" }, io.Discard, &stderr)
	}()
	require.Eventually(t, func() bool {
		r, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	}, time.Minute, 50*time.Millisecond, "the service answers its health check")

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, err := mw.CreateFormFile("files", "index.html")
	require.NoError(t, err)
	_, _ = io.WriteString(w, "<h1>Certificate</h1><p>rendered by mailledger pdfservice</p>")
	require.NoError(t, mw.Close())
	resp, err := http.Post("http://"+addr+render.ConvertHTMLRoute, mw.FormDataContentType(), &body)
	require.NoError(t, err)
	pdf, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", pdf)
	assert.Contains(t, pdftest.Text(t, pdf), "rendered by mailledger pdfservice")

	cancel()
	select {
	case c := <-code:
		assert.Equal(t, 0, c, "stderr: %s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("pdfservice did not stop")
	}
	assert.Contains(t, stderr.String(), "pdfservice listening")
	assert.Equal(t, exitUsage, run(context.Background(), []string{"pdfservice", "--concurrent", "0"}, nil, io.Discard, io.Discard))
}
