package app_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/domain/export"
)

// parseCounter counts the reads that parse a message.
type parseCounter struct {
	*slowArchive
	parsed atomic.Int64
}

func (p *parseCounter) ReadDocument(ctx context.Context, tenant string, id int64) (*archive.Document, error) {
	p.parsed.Add(1)
	return p.slowArchive.ReadDocument(ctx, tenant, id)
}

// TestExportNativesOnlyParsesNothing: a production of natives only reads no message
// through the MIME parser, and its load-file rows hold the same values as those of a
// production that parses (recipients compared as sets: stored ones come in address order).
func TestExportNativesOnlyParsesNothing(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t, database.SQLite, app.ExportsConfig{})
	counter := &parseCounter{slowArchive: f.slow}
	var err error
	f.x, err = app.NewExports(f.store, counter, f.cfg)
	require.NoError(t, err)
	ids := f.archiveMail("acme", generated(30))
	f.start()

	natives := f.createExport("acme", request("NAT", ids))
	f.awaitExport("acme", natives.JobID, export.StatusCompleted)
	assert.Zero(t, counter.parsed.Load(), "no message parsed for natives only")

	parsedReq := request("PAR", ids)
	parsedReq.IncludeText = boolPtr(true)
	parsed := f.createExport("acme", parsedReq)
	f.awaitExport("acme", parsed.JobID, export.StatusCompleted)
	require.Equal(t, int64(len(ids)), counter.parsed.Load(), "the text needs the parse")

	byEmail := func(jobID string) map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, row := range readCSV(t, f.download("acme", jobID)["loadfile.csv"]) {
			out[row["EMAILID"]] = row
		}
		return out
	}
	got, want := byEmail(natives.JobID), byEmail(parsed.JobID)
	require.Len(t, got, len(ids))
	attachments := 0
	for id, w := range want {
		g := got[id]
		require.NotNil(t, g, "email %s", id)
		for _, col := range []string{"TO", "CC", "BCC"} {
			assert.ElementsMatch(t, split(w[col]), split(g[col]), "email %s %s", id, col)
		}
		for _, col := range []string{"FROM", "SUBJECT", "DATESENT", "DATERECEIVED", "HASATTACH", "ATTACHCOUNT", "ATTACHNAMES",
			"CUSTODIAN", "FILETYPE", "FILEEXT", "FILESIZE", "MD5HASH", "SHA256HASH", "MESSAGEID", "INREPLYTO", "REFERENCES"} {
			assert.Equal(t, w[col], g[col], "email %s %s", id, col)
		}
		if w["HASATTACH"] == "Y" {
			attachments++
		}
	}
	assert.Positive(t, attachments, "some emails have attachments")
}

func split(v string) []string {
	if v == "" {
		return nil
	}
	parts := strings.Split(v, "; ")
	slices.Sort(parts)
	return parts
}
