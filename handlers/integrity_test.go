package handlers_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
)

func TestFlippedByteIsIntegrityError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	box := newMailbox(f)
	id := box.ids[2]
	file := filepath.Join(f.dataDir, "store", filepath.FromSlash(archive.MessageKey("default", id)))
	sealed, err := os.ReadFile(file)
	require.NoError(t, err)
	sealed[len(sealed)/2] ^= 0x01
	require.NoError(t, os.WriteFile(file, sealed, 0o600))

	for _, view := range []string{"/raw", "/text"} {
		resp, raw := f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d%s", id, view))
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s: %s", view, raw)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Equal(t, "integrity_error", decodeError(t, raw).Error.Code)
		assert.NotContains(t, string(raw), "keep it quiet")
	}
	resp, _ := f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d", id))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the metadata is intact")
	resp, _ = f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d/raw", box.ids[1]))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "other messages still read")

	logs := f.logs.String()
	assert.Contains(t, logs, `"code":"integrity_error"`, "the integrity error is logged")
	assert.Contains(t, logs, fmt.Sprintf("message %d", id), "the log names the message")
	assert.NotContains(t, logs, "merger rumours", "never the subject")
	assert.NotContains(t, logs, "keep it quiet", "never the body")
	assert.Equal(t, 2, f.countEvents(app.EventMessageViewed), "only what was served is recorded as viewed")
}

func TestUnknownKeyIsIntegrityError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	box := newMailbox(f)
	blobs, err := archive.NewLocalStore(filepath.Join(f.dataDir, "store"))
	require.NoError(t, err)
	otherKeys, err := archive.LoadOrCreateKeyring(t.TempDir())
	require.NoError(t, err)
	arc, err := archive.New(f.db, blobs, otherKeys, archive.Options{})
	require.NoError(t, err)
	application, err := app.New(f.store, f.signer, app.ApplicationConfig{Archive: arc})
	require.NoError(t, err)
	f.api.Attach(application)

	resp, raw := f.getAs(auditorUser, fmt.Sprintf("/api/v1/messages/%d/raw", box.ids[0]))
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "a file sealed with a key that is gone: %s", raw)
	assert.Equal(t, "integrity_error", decodeError(t, raw).Error.Code)
	assert.Contains(t, f.logs.String(), "unknown archive key")
}

func TestWithoutArchiveMessagesAre503(t *testing.T) {
	t.Parallel()
	f := newFixture(t, database.SQLite)
	application, err := app.New(f.store, f.signer, app.ApplicationConfig{})
	require.NoError(t, err)
	f.api.Attach(application)
	resp, raw := f.get("/api/v1/messages")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "body %s", raw)
	assert.Equal(t, "archive_unavailable", decodeError(t, raw).Error.Code)
	resp, _ = f.get("/api/v1/admin/legal-holds")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "legal holds do not need the archive")
}
