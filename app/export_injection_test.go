package app_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/export"
)

// formulaMail is a message whose subject and attachment name are spreadsheet formulas.
func formulaMail(subject, attachment string) archivetest.Mail {
	raw := fmt.Sprintf("From: mallory@example.test\r\nTo: victim@example.test\r\nSubject: %s\r\n"+
		"Date: Mon, 2 Feb 2026 10:00:00 +0000\r\nMessage-ID: <%x@example.test>\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n"+
		"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"%s\"\r\n\r\nx\r\n--b--\r\n",
		subject, subject, attachment)
	return archivetest.Mail{Raw: []byte(raw)}
}

// TestExportLoadFileFormulas: a cell that starts with = + - or @ is written to the CSV
// load file with a leading single quote, so that a spreadsheet shows it as text instead
// of running it (and a cell that starts with a quote gets one more, so that dropping one
// leading quote always gives the value back); the DAT load file keeps every value exactly.
func TestExportLoadFileFormulas(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{})
	cases := []struct{ subject, attachment string }{
		{`=HYPERLINK("http://x","y")`, `=cmd|' /C calc'!A0`},
		{`+1 555 0100`, `-2+3.xls`},
		{`@SUM(A1:A9)`, `plain.txt`},
		{`Re: =not at the start`, `a=b.txt`},
		{`'tis the season`, `'quoted'.txt`},
	}
	var mail []archivetest.Mail
	for _, c := range cases {
		mail = append(mail, formulaMail(c.subject, c.attachment))
	}
	req := request("FX", f.archiveMail("acme", mail))
	req.LoadFileFormat = strPtr("both")
	req.IncludeAttachments = boolPtr(true)
	v := f.createExport("acme", req)
	f.start()
	f.awaitExport("acme", v.JobID, export.StatusCompleted)
	files := f.download("acme", v.JobID)
	csvRows := readCSV(t, files["loadfile.csv"])
	datRows := readDAT(t, files["loadfile.dat"], specDelimiters)
	require.Len(t, csvRows, 2*len(cases), "an email row and an attachment row each")
	require.Len(t, datRows, len(csvRows))

	quoted := func(s string) string {
		if s != "" && strings.IndexByte("=+-@'", s[0]) >= 0 {
			return "'" + s
		}
		return s
	}
	for i, c := range cases {
		email, att := csvRows[2*i], csvRows[2*i+1]
		assert.Equal(t, quoted(c.subject), email["SUBJECT"], "CSV subject")
		assert.Equal(t, quoted(c.attachment), email["ATTACHNAMES"], "CSV attachment names of the email")
		assert.Equal(t, quoted(c.attachment), att["ATTACHNAMES"], "CSV name of the attachment row")
		assert.Equal(t, c.subject, datRows[2*i]["SUBJECT"], "DAT subject, exact")
		assert.Equal(t, c.attachment, datRows[2*i]["ATTACHNAMES"], "DAT attachment names, exact")
		assert.Equal(t, c.attachment, datRows[2*i+1]["ATTACHNAMES"], "DAT attachment row name, exact")
		for col, val := range email {
			assert.NotContains(t, "=+-@\t\r", firstByte(val), "CSV cell %s of row %d starts with a formula character: %q", col, 2*i, val)
		}
	}
}

func firstByte(s string) string {
	if s == "" {
		return "none"
	}
	return s[:1]
}
