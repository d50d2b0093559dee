package console_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
)

// startExports runs the export scheduler consumer (the real Background) and the runs
// (Exports.Run) until the test ends, as serve does. Before it, jobs stay pending.
func (f *fixture) startExports() {
	f.t.Helper()
	bg, err := app.NewBackground(f.env.Store, app.BackgroundConfig{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f.t, err)
	x := f.app.Exports
	x.Register(bg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- bg.Run(ctx) }()
	go func() { done <- x.Run(ctx) }()
	<-bg.Running()
	f.t.Cleanup(func() {
		cancel()
		require.NoError(f.t, <-done)
		require.NoError(f.t, <-done)
	})
}

// cancelledExport creates an export of message id in t through the use case and cancels
// it, and returns its job id.
func (f *fixture) cancelledExport(t string, id int64) string {
	f.t.Helper()
	ctx, md := context.Background(), domain.Metadata{Actor: "setup"}
	prefix := "MATRIX"
	v, err := f.app.Exports.Create(ctx, t, export.Request{BatesPrefix: &prefix, EmailIDs: []int64{id}}, md)
	require.NoError(f.t, err)
	_, err = f.app.Exports.Cancel(ctx, t, v.JobID, md)
	require.NoError(f.t, err)
	return v.JobID
}

// exportStatus reads an export's status through the use case.
func (f *fixture) exportStatus(t, jobID string) string {
	f.t.Helper()
	v, err := f.app.Exports.Get(context.Background(), t, jobID)
	require.NoError(f.t, err)
	return v.Status
}

// statusOnPage is the status the export page shows.
var statusOnPage = regexp.MustCompile(`<strong id="status">([a-z]+)</strong>`)

// awaitExportPage reloads an export's page, as its refresh does, until it shows status
// (at most 30 s) and returns that page. A failed or cancelled export ends the wait.
func (b *browser) awaitExportPage(path, status string) string {
	b.f.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		resp, page := b.get(path)
		require.Equal(b.f.t, http.StatusOK, resp.StatusCode, page)
		m := statusOnPage.FindStringSubmatch(page)
		require.NotNil(b.f.t, m, page)
		if m[1] == status {
			return page
		}
		require.NotContains(b.f.t, []string{"failed", "cancelled", "completed"}, m[1], "got status %s; want %s", m[1], status)
		select {
		case <-tick.C:
		case <-deadline:
			b.f.t.Fatalf("export page %s still shows %s after 30 s; want %s", path, m[1], status)
		}
	}
}

// checkProduction checks a downloaded ZIP of an export with both load files: both there,
// the CSV with one row per selected email and no other, each row's native in the ZIP with the archived bytes, named by its
// Bates number.
func checkProduction(t *testing.T, raw []byte, prefix string, want map[int64]string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err, "the download is a ZIP")
	files := map[string][]byte{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		require.NoError(t, err)
		body, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		files[zf.Name] = body
	}
	require.Contains(t, keys(files), "loadfile.dat")
	require.Contains(t, keys(files), "loadfile.csv")
	csvFile := files["loadfile.csv"]
	assert.Equal(t, len(want)+1, bytes.Count(files["loadfile.dat"], []byte("\r\n")), "DAT: a header and one line per selected email")
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(csvFile, []byte("\ufeff")))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, len(want)+1, "a header and one row per selected email")
	col := func(name string) int {
		i := slices.Index(rows[0], name)
		require.NotEqual(t, -1, i, "column %s in %v", name, rows[0])
		return i
	}
	emailCol, nativeCol, batesCol := col("EMAILID"), col("NATIVEPATH"), col("BEGBATES")
	var natives []string
	for _, row := range rows[1:] {
		id, err := strconv.ParseInt(row[emailCol], 10, 64)
		require.NoError(t, err)
		rawMail, ok := want[id]
		require.True(t, ok, "email %d was not selected", id)
		assert.True(t, strings.HasPrefix(row[batesCol], prefix+"_"), "got Bates %s; want prefix %s", row[batesCol], prefix)
		assert.Equal(t, "NATIVES/"+row[batesCol]+".eml", row[nativeCol])
		assert.Equal(t, rawMail, string(files[row[nativeCol]]), "native of email %d", id)
		natives = append(natives, row[nativeCol])
	}
	for name := range files {
		if strings.HasPrefix(name, "NATIVES/") {
			assert.Contains(t, natives, name, "a native of no selected email")
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
