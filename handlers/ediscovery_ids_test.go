package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

func TestEmailIDsAreExactOrRefused(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newExportFixture(t, d)
		for _, bad := range []string{
			"9007199254740993",     // 2^53+1: a double would round it to ...992
			"9223372036854775808",  // 2^63: beyond int64
			"18446744073709551616", // 2^64
			"-1", "0", "1.5", "1e3", `"1"`, "true", "null", "[1]", "{}",
		} {
			body := `{"bates_prefix": "EXACT", "email_ids": [5, ` + bad + `]}`
			resp, out := f.postAs(auditorUser, exportPath, body)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "email_ids [5, %s]: %s", bad, out)
			e := decodeError(t, out)
			assert.Equal(t, "validation_failed", e.Error.Code, "email_ids [5, %s]", bad)
			fields, _ := e.Error.Details["fields"].(map[string]any)
			reason, _ := fields["email_ids"].(string)
			assert.Contains(t, reason, "email_ids[1]", "email_ids [5, %s]: the bad element is named: %s", bad, out)
		}
		for _, notArray := range []string{`"5"`, "5", "{}"} {
			resp, out := f.postAs(auditorUser, exportPath, `{"bates_prefix": "EXACT", "email_ids": `+notArray+`}`)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "email_ids %s: %s", notArray, out)
			assert.Contains(t, string(out), "email_ids", "email_ids %s", notArray)
		}
		assert.Equal(t, 0, f.countEvents("export.job_created"), "nothing is stored for a refused request")

		const largest = "9007199254740991" // 2^53-1
		resp, out := f.postAs(auditorUser, exportPath, `{"bates_prefix": "EXACT", "email_ids": [`+largest+`, 7]}`)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", out)
		assert.Contains(t, string(out), `"email_ids":[`+largest+`,7]`, "the answer shows the id exactly")
		var payload, configJSON string
		require.NoError(t, f.db.QueryRow(f.db.Rebind(`SELECT payload FROM events WHERE event_type = ?`), "export.job_created").Scan(&payload))
		assert.Contains(t, payload, `"email_ids":[`+largest+`,7]`, "the ledger payload holds the id exactly")
		require.NoError(t, f.db.QueryRow(`SELECT config_json FROM ediscovery_exports`).Scan(&configJSON))
		assert.Contains(t, strings.ReplaceAll(configJSON, " ", ""), `"email_ids":[`+largest+`,7]`, "the export row holds the id exactly")
	})
}
