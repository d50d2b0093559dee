package archive

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// The search rules of docs/search-rules.md, one fixture message per case, and one table of
// queries with the messages each must find: run on SQLite, PostgreSQL and MySQL alike, so
// the three give the same answers.

// searchFixtures are the messages of the query table, by name. Line ends are LF; the
// parser takes both.
var searchFixtures = map[string]string{
	// Display names, addresses, a file name typed in the text, accents (a combining one
	// too), CJK without spaces.
	"plain": `From: "Alice Example" <alice@example.com>
To: bob@beta.test
Bcc: hidden.reader@gamma.test
Subject: Quarterly report
Date: Mon, 2 Feb 2026 10:00:00 +0000
Message-ID: <plain@fixture>

The résumé is attached. See report.pdf for the details.
会議は東京都庁で。 Crème brûlée, with a combining accent: crème.
`,
	// The HTML alternative is read too, its markup never.
	"html": `From: carol@other.test
To: bob@beta.test
Subject: Plan a meeting
Date: Tue, 3 Feb 2026 10:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain; charset=utf-8

plain version
--alt
Content-Type: text/html; charset=utf-8

<html><head><style>.markupstyle{}</style></head><body class="markupclass"><p>Only in <b>htmlonly</b>-version</p><script>scriptword()</script></body></html>
--alt--
`,
	// An attached message: its header and its text; a part without a header.
	"forward": `From: dave@delta.test
To: bob@beta.test
Subject: Fwd: old thread
Date: Wed, 4 Feb 2026 10:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="mix"

--mix

headerless part text: nakedword
--mix
Content-Type: message/rfc822

From: "Erin Inner" <erin@inner.test>
To: frank@inner.test
Subject: innersubject
Content-Type: text/plain; charset=utf-8

innerbody line
--mix--
`,
	// A text/plain attachment, a file name with a broken RFC 2231 value, a PDF labelled as
	// text (its bytes are no words), an HTML attachment.
	"attach": `From: gina@eps.test
To: bob@beta.test
Subject: files
Date: Thu, 5 Feb 2026 10:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: text/plain

see attached
--b1
Content-Type: text/plain; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"

attachedtext inside the notes
--b1
Content-Type: application/octet-stream
Content-Disposition: attachment; filename*0*=utf-8''broken%ZZ; filename*1="name.bin"
Content-Transfer-Encoding: base64

AAEC
--b1
Content-Type: text/x-vcard; name="offer.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQKJeLjz9MKMSAwIG9iaiA8PCAvTGVuZ3RoIDUgPj4gc3RyZWFtCmJpbmFyeXdvcmQKZW5kc3RyZWFtCg==
--b1
Content-Type: text/html; name="page.html"
Content-Disposition: attachment; filename="page.html"

<div title="attrword">pagetext</div>
--b1--
`,
	// Raw 8-bit header and body in windows-1252, no charset declared.
	"latin": "From: h@latin.test\nTo: bob@beta.test\nSubject: Forma\xe7\xe3o\nDate: Fri, 6 Feb 2026 10:00:00 +0000\n\ncaf\xe9 au lait\n",
	// Japanese, and an obsolete zone: 23:30 EDT is 03:30 UTC the next day.
	"japanese": "From: ito@jp.test\nTo: bob@beta.test\nSubject: お知らせ\nDate: Sat, 7 Feb 2026 23:30:00 EDT\nContent-Type: text/plain; charset=utf-8\n\n日本語のテキスト\n",
	// Obsolete address syntax: a comment, a route, white space before the colon; the
	// display name is not an address but is a word.
	"obsolete": "From  : \"Zebediah Quux\" <@relay.test:zq(comment)@example.org>\nTo: bob@beta.test\nSubject: a\nDate: Sun, 8 Feb 2026 10:00:00 +0000\n\nx\n",
	// A transfer encoding nobody knows ("8-bit"): the bytes are read in the declared charset.
	"koi8": "From: k@koi.test\nTo: bob@beta.test\nSubject: koi\nDate: Wed, 11 Feb 2026 10:00:00 +0000\nContent-Type: text/plain; charset=koi8-r\nContent-Transfer-Encoding: 8-bit\n\n\xd0\xd2\xc9\xd7\xc5\xd4 \xcd\xc9\xd2\n",
	// Quoted-printable HTML only.
	"qphtml": "From: q@qp.test\nTo: bob@beta.test\nSubject: newsletter\nDate: Mon, 9 Feb 2026 10:00:00 +0000\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n<p>Sch=C3=B6ne Gr=C3=BC=C3=9Fe aus K=C3=B6ln</p>\n",
}

// The "documents" fixture carries real documents (extract/testdata: written by Chromium
// and LibreOffice) as attachments: their text is searched.
func init() {
	var b strings.Builder
	b.WriteString("From: docs@docs.test\nTo: bob@beta.test\nSubject: the documents\nDate: Tue, 10 Feb 2026 10:00:00 +0000\n" +
		"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"d\"\n\n--d\nContent-Type: text/plain\n\nthree files\n")
	for _, f := range []struct{ file, name, ctype string }{
		{"sample-chromium.pdf", "invoice.pdf", "application/pdf"},
		{"sample.xlsx", "figures.xlsx", "application/octet-stream"},
		{"sample.odp", "review.odp", "application/vnd.oasis.opendocument.presentation"},
	} {
		content, err := os.ReadFile(filepath.Join("..", "extract", "testdata", f.file))
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "--d\nContent-Type: %s; name=%q\nContent-Disposition: attachment; filename=%q\nContent-Transfer-Encoding: base64\n\n%s\n",
			f.ctype, f.name, f.name, base64.StdEncoding.EncodeToString(content))
	}
	b.WriteString("--d--\n")
	searchFixtures["documents"] = b.String()
}

// searchTable is the query table: each query and the fixtures it finds; "*" is every one.
var searchTable = []struct {
	q    string
	want []string
}{
	{"report", []string{"plain"}},
	{"REPORT", []string{"plain"}},
	{"report.pdf", []string{"plain"}},
	{`"report pdf"`, []string{"plain"}},
	{`"pdf report"`, nil},
	{"pdf report", []string{"plain"}},
	{"repo*", []string{"plain"}},
	{"resume", []string{"plain", "documents"}},
	{"résumé", []string{"plain", "documents"}},
	{"RÉSUMÉ", []string{"plain", "documents"}},
	{"alice", []string{"plain"}},
	{"example", []string{"plain", "obsolete"}},
	{"alice@example.com", []string{"plain"}},
	{"Alice Example", []string{"plain"}},
	{"hidden.reader", []string{"plain"}},
	{"gamma.test", []string{"plain"}},
	{"東京", []string{"plain"}},
	{"京都", []string{"plain"}},
	{"東京都庁", []string{"plain"}},
	{"京都庁で", []string{"plain"}},
	{"大阪", nil},
	{"htmlonly", []string{"html"}},
	{"htmlonly-version", []string{"html"}},
	{"markupclass", nil},
	{"markupstyle", nil},
	{"scriptword", nil},
	{"body", nil},
	{"plain version", []string{"html"}},
	{"a", []string{"plain", "html", "obsolete"}},
	{"nakedword", []string{"forward"}},
	{"innersubject", []string{"forward"}},
	{"innerbody", []string{"forward"}},
	{"Erin Inner", []string{"forward"}},
	{"erin@inner.test", []string{"forward"}},
	{"attachedtext", []string{"attach"}},
	{"notes.txt", []string{"attach"}},
	{"notes", []string{"attach"}},
	{"broken", []string{"attach"}},
	{"pagetext", []string{"attach"}},
	{"page.html", []string{"attach"}},
	{"attrword", nil},
	{"offer.pdf", []string{"attach"}},
	{"binaryword", nil},
	{"formação", []string{"latin"}},
	{"formacao", []string{"latin"}},
	{"café", []string{"latin", "documents"}},
	{"cafe", []string{"latin", "documents"}},
	{"crème", []string{"plain"}},
	{"creme", []string{"plain"}},
	{"cre\u0300me", []string{"plain"}},
	{"brulee", []string{"plain"}},
	{"日本語", []string{"japanese"}},
	{"本語", []string{"japanese"}},
	{"テキスト", []string{"japanese"}},
	{"お知らせ", []string{"japanese"}},
	{"zebediah", []string{"obsolete"}},
	{"zq@example.org", []string{"obsolete"}},
	{"relay", []string{"obsolete"}},
	{"comment", []string{"obsolete"}},
	{"schöne grüße", []string{"qphtml"}},
	{"schone grusse", []string{"qphtml"}},
	{"koln", []string{"qphtml", "documents"}},
	{"x", []string{"obsolete"}},
	{"re*", nil},
	{"привет мир", []string{"koi8"}},
	{"müller", []string{"documents"}},
	{"Dear Mr. Muller", []string{"documents"}},
	{"zürich", []string{"documents"}},
	{"train to zurich", []string{"documents"}},
	{`"revenue grew"`, []string{"documents"}},
	{"consulting 1200", []string{"documents"}},
	{"коллеги", []string{"documents"}},
	{"invoice.pdf", []string{"documents"}},
	{"bob@beta.test", []string{"*"}},
	{"...", []string{"*"}},
	{`"`, []string{"*"}},
	{"", []string{"*"}},
}

func loadSearchFixtures(t *testing.T, arc *Archive) map[string]int64 {
	t.Helper()
	names := make([]string, 0, len(searchFixtures))
	for name := range searchFixtures {
		names = append(names, name)
	}
	slices.Sort(names)
	raws := make([][]byte, len(names))
	for i, name := range names {
		raws[i] = []byte(searchFixtures[name])
	}
	ids := map[string]int64{}
	for i, r := range commitRaw(t, arc, "default", raws...) {
		ids[names[i]] = r.ID
	}
	return ids
}

func TestSearchQueryTable(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, _ := newSearchArchive(t, d)
		checkSearchTable(t, arc, loadSearchFixtures(t, arc))
	})
}

// checkSearchTable runs searchTable on arc, which holds the fixtures by ids.
func checkSearchTable(t *testing.T, arc *Archive, ids map[string]int64) {
	t.Helper()
	all := make([]int64, 0, len(ids))
	for _, id := range ids {
		all = append(all, id)
	}
	for _, c := range searchTable {
		want := []int64{}
		for _, name := range c.want {
			if name == "*" {
				want = append(want, all...)
				continue
			}
			want = append(want, ids[name])
		}
		got := searchIDs(t, arc, Query{Tenant: "default", Text: c.q, Limit: 100})
		assert.ElementsMatch(t, want, got, "q=%q: want %v", c.q, c.want)
	}
}

// TestSearchReadsObsoleteZones: a date filter finds the message dated 23:30 EDT on the
// 7th at 03:30 UTC on the 8th.
func TestSearchReadsObsoleteZones(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, _ := newSearchArchive(t, d)
		ids := loadSearchFixtures(t, arc)
		day := time.Date(2026, 2, 8, 0, 0, 0, 0, time.UTC)
		got := searchIDs(t, arc, Query{Tenant: "default", Text: "日本語", DateFrom: day, DateTo: day.Add(24 * time.Hour)})
		assert.Equal(t, []int64{ids["japanese"]}, got)
		got = searchIDs(t, arc, Query{Tenant: "default", Text: "日本語", DateTo: day})
		assert.Empty(t, got)
	})
}

// TestSearchRefusesALongQuery: a query past the analyzer's bounds is ErrBadQuery, not a
// silent cut.
func TestSearchRefusesALongQuery(t *testing.T) {
	arc, _ := newSearchArchive(t, database.SQLite)
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + strconv.Itoa(i)
	}
	_, _, err := arc.Search(context.Background(), Query{Tenant: "default", Text: strings.Join(words, " ")})
	require.ErrorIs(t, err, ErrBadQuery)
}

// cappedPlanner is the archive's own planner with another driveCap, to run one query
// through both plans.
type cappedPlanner struct {
	searchIndex
	searchPlanner
	cap  int
	walk bool
}

func (c cappedPlanner) driveCap() int { return c.cap }

// walksAddresses: a cappedPlanner sorts address hits like the other dialects unless walk.
func (c cappedPlanner) walksAddresses() bool { return c.walk && c.searchPlanner.walksAddresses() }

// TestSearchPlansAgree: a search driven from an index (the text's hits or an address's
// roles, when they are few), one left to the date index (many), and those that walk an
// address's messages in date-key order, give the same page and count, with every kind of
// other condition, at every offset. Some messages have two addresses of one domain, or
// the participant as sender and recipient: each is counted and listed once.
func TestSearchPlansAgree(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		arc, _ := newSearchArchive(t, d)
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var raws [][]byte
		for i := range 240 {
			words := "harbour"
			if i%3 == 0 {
				words += " crane"
			}
			from := []string{"ann@a.test", "bob@b.test", "cy@c.test"}[i%3]
			to, cc := []string{"dee@d.test"}, []string(nil)
			if i%4 == 0 {
				to = append(to, "eve@d.test")
			}
			if i%5 == 0 {
				cc = []string{"bob@b.test"}
			}
			raws = append(raws, archivetest.Message(from, to, cc, words, fmt.Sprintf("note %d", i%7), day.Add(time.Duration(i/2)*7*time.Hour)))
		}
		commitRaw(t, arc, "default", raws...)
		commitRaw(t, arc, "other", archivetest.Message("ann@a.test", []string{"dee@d.test"}, nil, "harbour crane", "note 1", day))
		planner := arc.index.(searchPlanner)
		mid := day.Add(600 * time.Hour)
		for _, q := range []Query{
			{Text: "harbour"}, {Text: "crane"}, {Text: "harbour crane"}, {Text: "harbour", Offset: 100},
			{Text: "crane", From: "ann@a.test"}, {Text: "harbour", To: "@d.test", Offset: 30},
			{Text: "crane", DateFrom: mid}, {Text: "harbour note", DateTo: mid},
			{Text: "harbour", Participant: "bob@b.test"}, {Text: "harb*"}, {Text: `"harbour crane"`, Limit: 7, Offset: 3},
			{From: "ann@a.test"}, {To: "@d.test", Offset: 50}, {Participant: "bob@b.test", DateTo: mid},
			{From: "@a.test", To: "dee@d.test", Limit: 5, Offset: 5}, {Text: "crane", From: "@a.test", Participant: "dee@d.test"},
		} {
			q.Tenant = "default"
			if q.Limit == 0 {
				q.Limit = 20
			}
			var pages [][]int64
			var totals []int
			plans := []searchIndex{
				cappedPlanner{searchIndex: planner.(searchIndex), searchPlanner: planner, cap: 0},
				cappedPlanner{searchIndex: planner.(searchIndex), searchPlanner: planner, cap: 1 << 30},
				planner.(searchIndex),
			}
			if planner.walksAddresses() {
				plans = append(plans, cappedPlanner{searchIndex: planner.(searchIndex), searchPlanner: planner, cap: 0, walk: true})
			}
			for _, plan := range plans {
				arc.index = plan
				msgs, total, err := arc.Search(context.Background(), q)
				require.NoError(t, err, "%+v", q)
				ids := []int64{}
				for _, m := range msgs {
					ids = append(ids, m.ID)
				}
				pages, totals = append(pages, ids), append(totals, total)
			}
			arc.index = planner.(searchIndex)
			for i := 1; i < len(plans); i++ {
				assert.Equal(t, pages[0], pages[i], "page of %+v: date walk, then plan %d", q, i)
				assert.Equal(t, totals[0], totals[i], "count of %+v: date walk, then plan %d", q, i)
			}
			assert.NotEmpty(t, pages[0], "%+v finds something", q)
		}
		bob := 0 // bob sent every third message and is copied on every fifth
		for i := range 240 {
			if i%3 == 1 || i%5 == 0 {
				bob++
			}
		}
		for _, c := range []struct {
			q    Query
			want int
		}{{Query{To: "@d.test"}, 240}, {Query{Participant: "bob@b.test"}, bob}, {Query{To: "bob@b.test"}, 48}} {
			c.q.Tenant, c.q.Limit = "default", 300
			msgs, total, err := arc.Search(context.Background(), c.q)
			require.NoError(t, err)
			assert.Equal(t, c.want, total, "count of %+v", c.q)
			seen := map[int64]bool{}
			for _, m := range msgs {
				assert.False(t, seen[m.ID], "%+v lists message %d twice", c.q, m.ID)
				seen[m.ID] = true
			}
			assert.Len(t, seen, c.want, "page of %+v", c.q)
		}
	})
}
