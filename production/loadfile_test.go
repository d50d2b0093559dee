package production_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/production"
)

// TestCSVNeutralisesFormulas: every CSV cell that starts with = + - @, a tab, a carriage
// return or a quote gets a leading quote, whatever its column (a sender address can be
// "=1+2@x"); the paths stay exact because no folder name starts with such a character;
// the DAT holds the values unchanged.
func TestCSVNeutralisesFormulas(t *testing.T) {
	msg := &archive.Parsed{From: "-rf@x.test", To: []string{"@a@x.test", "b@x.test"}, Subject: "\t=1+1",
		MessageID: "\r=2", InReplyTo: "'x", References: "+3",
		Attachments: []archive.Attachment{{Seq: 1, Name: "=cmd|' /C calc'!A0", Type: "text/plain", Content: []byte("x")}}}
	root := t.TempDir()
	p, err := production.Create(root, "acme", testJob, production.Config{Prefix: "P", Digits: 3,
		Natives: true, Attachments: true, ByCustodian: true, CSV: true, DAT: true, DateFormat: "iso8601"})
	require.NoError(t, err)
	_, err = p.Add(1, document(42, "Subject: x\r\n\r\nbody\r\n", msg))
	require.NoError(t, err)
	_, err = p.Close()
	require.NoError(t, err)

	data, err := os.ReadFile(filepath.Join(p.Dir(), production.LoadFileCSV))
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\uFEFF")))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "header, email, attachment")
	cell := func(row int, col string) string {
		i := slices.Index(production.LoadFileColumns, col)
		require.GreaterOrEqual(t, i, 0, col)
		return rows[row][i]
	}
	for col, want := range map[string]string{
		"FROM": "'-rf@x.test", "CUSTODIAN": "'-rf@x.test", "TO": "'@a@x.test; b@x.test", "SUBJECT": "'\t=1+1",
		"MESSAGEID":  "'=2", // encoding/csv drops a CR inside a value when it writes CRLF line ends "INREPLYTO": "''x", "REFERENCES": "'+3", "ATTACHNAMES": "'=cmd|' /C calc'!A0",
		"NATIVEPATH": "_rf@x.test/NATIVES/P_001.eml", "ATTACHPATH": "_rf@x.test/ATTACHMENTS/P_001_001.txt",
	} {
		assert.Equal(t, want, cell(1, col), "email row %s", col)
	}
	assert.Equal(t, "'=cmd|' /C calc'!A0", cell(2, "ATTACHNAMES"), "attachment row name")
	assert.Equal(t, production.LoadFileColumns, rows[0], "header row unchanged")

	dat, err := os.ReadFile(filepath.Join(p.Dir(), production.LoadFileDAT))
	require.NoError(t, err)
	for _, exact := range []string{"\u00B6-rf@x.test\u00B6", "\u00B6\t=1+1\u00B6", "\u00B6\u00AE=2\u00B6", "\u00B6'x\u00B6", "\u00B6=cmd|' /C calc'!A0\u00B6"} {
		assert.Contains(t, string(dat), exact, "the DAT keeps the value exactly")
	}
	assert.FileExists(t, filepath.Join(p.Dir(), "_rf@x.test", "NATIVES", "P_001.eml"))
}
