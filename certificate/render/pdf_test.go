package render_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/certificate/render/pdftest"
)

func samplePage(t *testing.T) ([]byte, string) {
	t.Helper()
	view, err := render.NewView(sampleBody(), testKey)
	require.NoError(t, err)
	page, err := render.HTML(view)
	require.NoError(t, err)
	return page, view.Hash
}

// TestPDFThroughChromium renders the certificate with the chromium stand-in of Gotenberg
// and finds the hash, on one line, in the text of a one-page PDF.
func TestPDFThroughChromium(t *testing.T) {
	srv := pdftest.Start(t)
	page, hash := samplePage(t)
	pdf, err := (&render.PDFClient{URL: srv.URL}).Convert(t.Context(), page)
	require.NoError(t, err)
	text := pdftest.Text(t, pdf)
	assert.Contains(t, text, hash)
	assert.Contains(t, text, "GDPR-2026-00007")
	assert.Equal(t, 1, pdftest.Pages(t, pdf), "one A4 page")
}

// TestPDFRequestIsGotenbergsForm checks the request: POST to the HTML route, the page as
// the multipart file "files" named index.html.
func TestPDFRequestIsGotenbergsForm(t *testing.T) {
	page, _ := samplePage(t)
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, "/forms/chromium/convert/html", r.URL.Path)
		f, fh, err := r.FormFile("files")
		if assert.NoError(t, err) {
			assert.Equal(t, "index.html", fh.Filename)
			got, _ = io.ReadAll(f)
		}
		assert.Equal(t, "true", r.FormValue("preferCssPageSize"))
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.7 stand-in"))
	}))
	defer srv.Close()
	pdf, err := (&render.PDFClient{URL: srv.URL + "/"}).Convert(t.Context(), page)
	require.NoError(t, err)
	assert.Equal(t, "%PDF-1.7 stand-in", string(pdf))
	assert.Equal(t, page, got, "the uploaded index.html is the page")
}

// TestPDFUnavailable checks that every way the service can fail is ErrPDFUnavailable.
func TestPDFUnavailable(t *testing.T) {
	answer := func(status int, ctype, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	cases := map[string]struct{ url, reason string }{
		"unset":              {"", "PDFSERVICE_URL is not set"},
		"connection refused": {refused, "connection refused"},
		"server error":       {answer(http.StatusServiceUnavailable, "text/plain", "busy\n"), "503 Service Unavailable: busy"},
		"bad request":        {answer(http.StatusBadRequest, "text/plain", "form file 'index.html' is required"), "400 Bad Request"},
		"not a pdf":          {answer(http.StatusOK, "text/html", "<html>"), "not a PDF"},
		"bad url":            {"://nowhere", "missing protocol scheme"},
	}
	page, _ := samplePage(t)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := (&render.PDFClient{URL: c.url}).Convert(t.Context(), page)
			require.ErrorIs(t, err, render.ErrPDFUnavailable)
			assert.Contains(t, err.Error(), c.reason)
		})
	}
	var nilClient *render.PDFClient
	_, err = nilClient.Convert(t.Context(), page)
	assert.ErrorIs(t, err, render.ErrPDFUnavailable, "no client configured")
}
