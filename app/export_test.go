package app_test

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/production"
	"github.com/mailledger/mailledger/projections"
)

// productionCase is an export of the corpus with every option on, and what the test
// expects of each email id.
type productionCase struct {
	f       *exportFixture
	ids     []int64           // email_ids, in request order
	skipped map[int64]bool    // not in the tenant, erased or missing
	broken  int64             // a message whose file was damaged: failed
	view    *app.ExportView   // the completed job
	files   map[string][]byte // the downloaded ZIP
}

// TestExportCorpusEveryOption exports the imported corpus and generated mail with every
// option on, then checks the production from the outside: the ZIP, both load files, the
// natives against the archived originals, text and attachment files, custodian folders,
// numbering, item outcomes and the hashes recorded in the ledger.
func TestExportCorpusEveryOption(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		c := &productionCase{f: newExportFixture(t, d, app.ExportsConfig{Workers: 4}), skipped: map[int64]bool{}}
		c.archive()
		c.f.start()
		req := export.Request{
			BatesPrefix: strPtr("ACME-PROD"), BatesDigits: intPtr(7), IncludeNatives: boolPtr(true),
			IncludeText: boolPtr(true), IncludeAttachments: boolPtr(true), OrganizeByCustodian: boolPtr(true),
			LoadFileFormat: strPtr("both"), DateFormat: strPtr("us"), DatDelimiters: strPtr("spec"),
			EmailIDs: c.ids, Workers: intPtr(3),
		}
		v := c.f.createExport("acme", req)
		c.view = c.f.awaitExport("acme", v.JobID, export.StatusCompleted, export.StatusFailed)
		require.Equal(t, export.StatusCompleted, c.view.Status, "error: %v", c.view.ErrorMessage)
		c.files = c.f.download("acme", v.JobID)
		c.checkItems()
		rows := readCSV(t, c.files[production.LoadFileCSV])
		c.checkDAT(rows)
		c.checkRows(rows)
		c.checkLedger()
		c.checkRebuild()
	})
}

// checkRebuild: replaying the ledger gives the eDiscovery tables the same rows.
func (c *productionCase) checkRebuild() {
	tables := projections.Export{}.Tables()
	live := map[string][][]any{}
	for _, table := range tables {
		live[table] = c.f.rows(`SELECT * FROM ` + table + ` ORDER BY 1`)
	}
	_, err := projections.Rebuild(c.f.ctx, c.f.store, nil)
	require.NoError(c.f.t, err)
	for _, table := range tables {
		assert.Equal(c.f.t, live[table], c.f.rows(`SELECT * FROM `+table+` ORDER BY 1`), "%s after a rebuild", table)
	}
}

// archive stores the corpus and generated mail in acme, a message in globex, erases some
// of acme's mail and damages one file, and builds the shuffled email_ids.
func (c *productionCase) archive() {
	f := c.f
	im := &archive.Importer{Archive: f.arc, Workers: 2, BatchSize: 32}
	rep, err := im.Import(f.ctx, "acme", []string{archivetest.CorpusDir(f.t)})
	require.NoError(f.t, err)
	require.Greater(f.t, len(rep.IDs), 100, "corpus messages imported")
	gen := f.archiveMail("acme", generated(40))
	other := f.archiveMail("globex", generated(3))
	n, err := f.arc.Erase(f.ctx, archive.EraseRequest{Tenant: "acme", RequestID: "GDPR-2026-09999", Addresses: []string{"frank@gamma.test"}, Today: time.Now()})
	require.NoError(f.t, err)
	require.Positive(f.t, n, "erased messages")
	for id, by := range f.erasedBy(append(slices.Clone(rep.IDs), gen...)) {
		if by != "" {
			c.skipped[id] = true
		}
	}
	for _, id := range gen {
		if !c.skipped[id] {
			c.broken = id
			break
		}
	}
	damage(f.t, filepath.Join(f.dataDir, "store", archive.MessageKey("acme", c.broken)))
	c.skipped[other[0]], c.skipped[99_999_999] = true, true
	c.ids = slices.Concat(rep.IDs, gen, []int64{other[0], 99_999_999})
	rand.New(rand.NewSource(5)).Shuffle(len(c.ids), func(i, j int) { c.ids[i], c.ids[j] = c.ids[j], c.ids[i] })
}

// damage flips one byte in the middle of a file.
func damage(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// item is one row of ediscovery_export_items.
type item struct {
	status, bates, message string
}

func (c *productionCase) items() map[int64]item {
	rows, err := c.f.db.Query(c.f.db.Rebind(`SELECT email_id, status, bates_number, error_message FROM ediscovery_export_items WHERE job_id = ?`), c.view.JobID)
	require.NoError(c.f.t, err)
	defer rows.Close()
	out := map[int64]item{}
	for rows.Next() {
		var id int64
		var it item
		var bates, msg *string
		require.NoError(c.f.t, rows.Scan(&id, &it.status, &bates, &msg))
		if bates != nil {
			it.bates = *bates
		}
		if msg != nil {
			it.message = *msg
		}
		out[id] = it
	}
	require.NoError(c.f.t, rows.Err())
	return out
}

// checkItems: skipped and failed items take no number; the produced ones are numbered
// 1, 2, 3 … in email_ids order.
func (c *productionCase) checkItems() {
	t, items := c.f.t, c.items()
	require.Len(t, items, len(c.ids), "one item per email id")
	next := int64(1)
	for _, id := range c.ids {
		it := items[id]
		switch {
		case c.skipped[id]:
			assert.Equal(t, export.ItemSkipped, it.status, "email %d", id)
			assert.Empty(t, it.bates)
		case id == c.broken:
			assert.Equal(t, export.ItemFailed, it.status, "damaged email %d", id)
			assert.Contains(t, it.message, "integrity", "the error is recorded")
			assert.Empty(t, it.bates)
		default:
			assert.Equal(t, export.ItemSuccess, it.status, "email %d: %s", id, it.message)
			assert.Equal(t, fmt.Sprintf("ACME-PROD_%07d", next), it.bates, "email %d", id)
			next++
		}
	}
	v := c.view
	assert.Equal(t, len(c.ids), v.TotalEmails)
	assert.Equal(t, len(c.ids), v.Processed)
	assert.Equal(t, 1, v.Failed)
	assert.Equal(t, int64(1), v.BatesStart)
	require.NotNil(t, v.BatesEnd)
	assert.Equal(t, next-1, *v.BatesEnd, "bates_end is the last number produced")
	assert.InDelta(t, 1.0, v.Progress, 1e-9)
	require.NotNil(t, v.CompletedAt)
	require.NotNil(t, v.OutputSize)
	assert.Equal(t, "acme/ediscovery/"+v.JobID, v.OutputPath)
}

// checkDAT: the DAT file, read as docs/api.md describes it, holds the CSV's rows (a CSV
// value that starts with a quote is the value with a quote before it, docs/api.md says).
func (c *productionCase) checkDAT(csvRows []map[string]string) {
	datRows := readDAT(c.f.t, c.files[production.LoadFileDAT], specDelimiters)
	require.Len(c.f.t, datRows, len(csvRows))
	for i := range csvRows {
		for col, v := range csvRows[i] {
			v = strings.TrimPrefix(v, "'")
			assert.Equal(c.f.t, strings.ReplaceAll(v, "\n", "\u00AE"), datRows[i][col], "row %d column %s", i+1, col)
		}
	}
}

var (
	safeFolder = regexp.MustCompile(`^[a-z0-9._@+-]+$`)
	extPattern = regexp.MustCompile(`^[a-z0-9]{1,10}$`)
)

// checkRows checks every load-file row against the archive and the ZIP, and that the ZIP
// holds exactly the files the load file names.
func (c *productionCase) checkRows(rows []map[string]string) {
	t := c.f.t
	named := map[string]bool{production.LoadFileCSV: true, production.LoadFileDAT: true}
	emails := map[string]map[string]string{}
	var attachments []map[string]string
	for _, r := range rows {
		if r["PARENTID"] == "" {
			emails[r["DOCID"]] = r
			c.checkEmailRow(r, named)
		} else {
			attachments = append(attachments, r)
		}
	}
	produced := 0
	for _, it := range c.items() {
		if it.status == export.ItemSuccess {
			produced++
		}
	}
	assert.Equal(t, produced, len(emails), "one row per produced email")
	wantAttachments := 0
	for _, r := range emails {
		n, _ := strconv.Atoi(r["ATTACHCOUNT"])
		wantAttachments += n
	}
	assert.Positive(t, wantAttachments, "the corpus has attachments")
	assert.Equal(t, wantAttachments, len(attachments), "one row per separated attachment")
	t.Logf("%d emails, %d attachments, %d files", len(emails), len(attachments), len(c.files))
	for _, r := range attachments {
		c.checkAttachmentRow(r, emails[r["PARENTID"]], named)
	}
	var got []string
	for name := range c.files {
		got = append(got, name)
	}
	var want []string
	for name := range named {
		want = append(want, name)
	}
	assert.ElementsMatch(t, want, got, "the ZIP holds the load files and the files they name, nothing else")
}

func (c *productionCase) checkEmailRow(r map[string]string, named map[string]bool) {
	t := c.f.t
	id, err := strconv.ParseInt(r["EMAILID"], 10, 64)
	require.NoError(t, err)
	doc := r["DOCID"]
	assert.Equal(t, []string{doc, doc, doc}, []string{r["BEGBATES"], r["ENDBATES"], r["BEGATTACH"]})
	assert.Equal(t, c.items()[id].bates, doc, "DOCID of email %d", id)
	raw, err := c.f.arc.Raw(c.f.ctx, "acme", id)
	require.NoError(t, err)
	msg, err := c.f.arc.Parser().Parse(raw)
	require.NoError(t, err)
	native := c.files[r["NATIVEPATH"]]
	assert.Equal(t, raw, native, "native of %s is byte-identical to the archived original", doc)
	sum, md := sha256.Sum256(native), md5.Sum(native)
	assert.Equal(t, hex.EncodeToString(sum[:]), r["SHA256HASH"], doc)
	assert.Equal(t, hex.EncodeToString(md[:]), r["MD5HASH"], doc)
	assert.Equal(t, strconv.Itoa(len(raw)), r["FILESIZE"])
	assert.Equal(t, msg.Text, string(c.files[r["TEXTPATH"]]), "text of %s", doc)
	folder := r["CUSTODIAN"]
	assert.Equal(t, msg.From, folder)
	if !safeFolder.MatchString(folder) {
		folder = production.CustodianFolder(folder)
	}
	require.True(t, safeFolder.MatchString(folder), "custodian folder %q", folder)
	assert.Equal(t, folder+"/NATIVES/"+doc+".eml", r["NATIVEPATH"])
	assert.Equal(t, folder+"/TEXT/"+doc+".txt", r["TEXTPATH"])
	assert.Equal(t, strconv.Itoa(len(msg.Attachments)), r["ATTACHCOUNT"])
	assert.Equal(t, map[bool]string{true: "Y", false: "N"}[len(msg.Attachments) > 0], r["HASATTACH"])
	assert.Equal(t, msg.MessageID, r["MESSAGEID"])
	assert.Equal(t, "message/rfc822", r["FILETYPE"])
	_, err = time.Parse("01/02/2006 15:04:05", r["DATERECEIVED"])
	assert.NoError(t, err, "DATERECEIVED in the us format")
	named[r["NATIVEPATH"]], named[r["TEXTPATH"]] = true, true
	if len(msg.Attachments) == 0 {
		assert.Equal(t, doc, r["ENDATTACH"])
		assert.Empty(t, r["ATTACHPATH"])
		return
	}
	paths := strings.Split(r["ATTACHPATH"], "; ")
	assert.Len(t, paths, len(msg.Attachments), "ATTACHPATH of %s", doc)
	assert.Equal(t, fmt.Sprintf("%s_%03d", doc, len(msg.Attachments)), r["ENDATTACH"])
	for i, p := range paths {
		assert.True(t, strings.HasPrefix(p, folder+"/ATTACHMENTS/"+fmt.Sprintf("%s_%03d.", doc, i+1)), "attachment path %q", p)
		assert.Equal(t, msg.Attachments[i].Content, c.files[p], "attachment %d of %s is decoded", i+1, doc)
	}
}

func (c *productionCase) checkAttachmentRow(r, parent map[string]string, named map[string]bool) {
	t := c.f.t
	require.NotNil(t, parent, "attachment %s names its parent", r["DOCID"])
	seq, err := strconv.Atoi(r["ATTACHNUM"])
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%s_%03d", parent["DOCID"], seq), r["DOCID"])
	assert.Equal(t, r["DOCID"], r["BEGBATES"])
	assert.Equal(t, []string{parent["DOCID"], parent["ENDATTACH"], parent["EMAILID"], parent["CUSTODIAN"]},
		[]string{r["BEGATTACH"], r["ENDATTACH"], r["EMAILID"], r["CUSTODIAN"]})
	assert.Regexp(t, extPattern, r["FILEEXT"])
	assert.Equal(t, r["DOCID"]+"."+r["FILEEXT"], filepath.Base(r["NATIVEPATH"]))
	data, ok := c.files[r["NATIVEPATH"]]
	require.True(t, ok, "attachment file %s is in the ZIP", r["NATIVEPATH"])
	sum, md := sha256.Sum256(data), md5.Sum(data)
	assert.Equal(t, hex.EncodeToString(sum[:]), r["SHA256HASH"])
	assert.Equal(t, hex.EncodeToString(md[:]), r["MD5HASH"])
	assert.Equal(t, strconv.Itoa(len(data)), r["FILESIZE"])
	assert.Contains(t, parent["ATTACHPATH"], r["NATIVEPATH"])
	named[r["NATIVEPATH"]] = true
}

// checkLedger: the completion event holds the load files' SHA-256 and a manifest hash
// that the downloaded files reproduce.
func (c *productionCase) checkLedger() {
	t := c.f.t
	recs, err := c.f.store.Load(context.Background(), export.StreamID(c.view.JobID))
	require.NoError(t, err)
	var done export.Completed
	completions := 0
	for _, r := range recs {
		if r.EventType == export.EventCompleted {
			completions++
			require.NoError(t, json.Unmarshal(r.Data, &done))
		}
	}
	require.Equal(t, 1, completions, "completion events")
	for _, name := range []string{production.LoadFileCSV, production.LoadFileDAT} {
		sum := sha256.Sum256(c.files[name])
		assert.Equal(t, hex.EncodeToString(sum[:]), done.LoadFiles[name], "hash of %s", name)
	}
	hash, size := manifestOf(c.files)
	assert.Equal(t, hash, done.ManifestHash, "manifest hash of the downloaded files")
	require.NotNil(t, c.view.ManifestHash)
	assert.Equal(t, hash, *c.view.ManifestHash)
	assert.Equal(t, len(c.files), done.ProducedFiles)
	assert.Equal(t, size, done.OutputSize)
	assert.Equal(t, size, *c.view.OutputSize)
	progress := 0
	for _, r := range recs {
		if r.EventType == export.EventProgress {
			progress++
		}
	}
	assert.Less(t, progress, len(c.ids)/2, "progress is recorded in batches, not per email")
}

// manifestOf computes a manifest as production.Manifest documents it, from the files alone:
// one "<sha256>  <path>\n" line per file, paths ordered folder by folder by name.
func manifestOf(files map[string][]byte) (string, int64) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) })
	h := sha256.New()
	var size int64
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(h, "%s  %s\n", hex.EncodeToString(sum[:]), n)
		size += int64(len(files[n]))
	}
	return hex.EncodeToString(h.Sum(nil)), size
}
