package pdfservice_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/certificate/render/pdftest"
)

// upload posts files (name → content) to the HTML route as Gotenberg's clients do.
func upload(t *testing.T, url string, files map[string]string) (*http.Response, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for name, content := range files {
		w, err := mw.CreateFormFile("files", name)
		require.NoError(t, err)
		_, err = io.WriteString(w, content)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	resp, err := http.Post(url+render.ConvertHTMLRoute, mw.FormDataContentType(), &body)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, raw
}

func TestRendersHTMLToPDFOffline(t *testing.T) {
	srv := pdftest.Start(t)
	var fetched atomic.Int32
	beacon := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { fetched.Add(1) }))
	defer beacon.Close()
	page := fmt.Sprintf(`<!doctype html><html><head><link rel="stylesheet" href="style.css"></head><body>
<h1>Certificate of erasure</h1><p class="n">Request GDPR-2026-00042</p>
<img src="%[1]s/pixel.png"><script>document.body.innerHTML += "<p>scripted</p>"; fetch("%[1]s/js")</script>
</body></html>`, beacon.URL)
	resp, pdf := upload(t, srv.URL, map[string]string{"index.html": page, "style.css": ".n { font-weight: bold }"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", pdf)
	assert.Equal(t, "application/pdf", resp.Header.Get("Content-Type"))
	text := pdftest.Text(t, pdf)
	assert.Contains(t, text, "Certificate of erasure")
	assert.Contains(t, text, "GDPR-2026-00042")
	assert.NotContains(t, text, "scripted", "no JavaScript runs")
	assert.Equal(t, int32(0), fetched.Load(), "the page reached no network")
}

func TestRefusals(t *testing.T) {
	srv := pdftest.Start(t)
	resp, raw := upload(t, srv.URL, map[string]string{"other.html": "<p>x</p>"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
	assert.Contains(t, string(raw), "index.html")
	resp, _ = upload(t, srv.URL, map[string]string{"../../index.html": "<p>x</p>"})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a path in a name is cut to its base name, inside the request's folder")

	r, err := http.Get(srv.URL + render.ConvertHTMLRoute)
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusNotFound, r.StatusCode, "the route takes POST only")
	r, err = http.Get(srv.URL + "/health")
	require.NoError(t, err)
	health, _ := io.ReadAll(r.Body)
	r.Body.Close()
	assert.Equal(t, http.StatusOK, r.StatusCode)
	assert.Contains(t, string(health), `"up"`)

	big := map[string]string{"index.html": "<p>x</p>", "big.bin": strings.Repeat("x", 33<<20)}
	resp, _ = upload(t, srv.URL, big)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "over the upload limit")
}
