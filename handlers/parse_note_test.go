package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// TestParseNoteOverHTTP: a MIME bomb of 50,000 nested multiparts is archived, served raw
// whole, its text up to the depth limit, and its metadata carries parse_note.
func TestParseNoteOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newFixture(t, d)
		raw := archivetest.DeepMessage(50000)
		id := f.archiveMail("default", raw)[0]
		path := fmt.Sprintf("/api/v1/messages/%d", id)
		resp, body := f.getAs(auditorUser, path)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var fields map[string]json.RawMessage
		decode(t, body, &fields)
		var note string
		require.NoError(t, json.Unmarshal(fields["parse_note"], &note), "parse_note: %s", fields["parse_note"])
		assert.Contains(t, note, "nested more than 100 deep")
		resp, body = f.getAs(auditorUser, path+"/text")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, string(body), "level 0")
		assert.Contains(t, string(body), "level 99")
		assert.NotContains(t, string(body), "bottom")
		resp, body = f.getAs(auditorUser, path+"/raw")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, strings.EqualFold(string(raw), string(body)), "raw served whole")
	})
}
