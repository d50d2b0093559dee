package render

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/mailledger/mailledger/domain/fault"
)

// ErrPDFUnavailable means no PDF could be made: PDFSERVICE_URL is unset, the service does
// not answer, answers an error, or answers something that is not a PDF. The HTML
// certificate does not depend on it.
var ErrPDFUnavailable = fault.New(fault.Unavailable, "pdf service unavailable")

// ErrPDFNotConfigured is the ErrPDFUnavailable of an unset PDFSERVICE_URL: an operator's
// choice, which serve warns about once at start, not a failure of each request.
var ErrPDFNotConfigured = fmt.Errorf("%w: PDFSERVICE_URL is not set", ErrPDFUnavailable)

// ConvertHTMLRoute is Gotenberg's route that converts an uploaded index.html with Chromium.
const ConvertHTMLRoute = "/forms/chromium/convert/html"

// MaxPDFSize bounds the PDF read from the service.
const MaxPDFSize = 32 << 20

// PDFClient converts HTML to PDF with a Gotenberg-compatible service at URL (the value of
// PDFSERVICE_URL, such as http://gotenberg:3000): POST {URL}/forms/chromium/convert/html
// with the page as the multipart file "files" named index.html.
type PDFClient struct {
	URL string
	// HTTPClient sends the request; nil means a client with a 60 s timeout.
	HTTPClient *http.Client
}

// pdfFields are Gotenberg's page properties: A4 in inches, the CSS @page size preferred.
var pdfFields = [][2]string{{"paperWidth", "8.27"}, {"paperHeight", "11.7"}, {"preferCssPageSize", "true"}, {"printBackground", "true"}}

var defaultPDFHTTP = &http.Client{Timeout: 60 * time.Second}

// Convert returns the PDF of the HTML page html; every failure wraps ErrPDFUnavailable.
func (c *PDFClient) Convert(ctx context.Context, html []byte) ([]byte, error) {
	if c == nil || strings.TrimSpace(c.URL) == "" {
		return nil, ErrPDFNotConfigured
	}
	req, err := c.request(ctx, html)
	if err != nil {
		return nil, err
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = defaultPDFHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPDFUnavailable, err)
	}
	defer resp.Body.Close()
	return readPDF(resp)
}

// request builds the multipart POST of html as index.html, asking for an A4 page sized
// by the page's own CSS.
func (c *PDFClient) request(ctx context.Context, html []byte) (*http.Request, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("files", "index.html")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPDFUnavailable, err)
	}
	if _, err := part.Write(html); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPDFUnavailable, err)
	}
	for _, f := range pdfFields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPDFUnavailable, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPDFUnavailable, err)
	}
	url := strings.TrimRight(c.URL, "/") + ConvertHTMLRoute
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPDFUnavailable, err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	return req, nil
}

func readPDF(resp *http.Response) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxPDFSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer: %w", ErrPDFUnavailable, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: the service answered %s: %s", ErrPDFUnavailable, resp.Status, firstLine(data))
	}
	if len(data) > MaxPDFSize {
		return nil, fmt.Errorf("%w: the PDF is larger than %d bytes", ErrPDFUnavailable, MaxPDFSize)
	}
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: the service answered %s, not a PDF", ErrPDFUnavailable, resp.Header.Get("Content-Type"))
	}
	return data, nil
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\n")
	if len(line) > 200 {
		line = line[:200]
	}
	return strings.TrimSpace(line)
}
