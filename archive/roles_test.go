package archive_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// roleCase is a fixture message for one case of the address rule (docs/address-rule.md)
// with the keys it must give each role.
type roleCase struct {
	name       string
	header     string // the header block, lines separated by \r\n, without the empty line
	envelope   []string
	senders    []string
	recipients []string
}

var roleCases = []roleCase{
	{name: "Sender", header: "From: Alice <alice@one.example>\r\nSender: Secretary <sec@one.example>\r\nTo: rob@two.example",
		senders: []string{"alice@one.example", "sec@one.example"}, recipients: []string{"rob@two.example"}},
	{name: "Return-Path", header: "Return-Path: <bounce@lists.example>\r\nFrom: alice@one.example\r\nTo: rob@two.example",
		senders: []string{"bounce@lists.example", "alice@one.example"}, recipients: []string{"rob@two.example"}},
	{name: "null Return-Path", header: "Return-Path: <>\r\nFrom: nulled@one.example\r\nTo: rob@two.example",
		senders: []string{"nulled@one.example"}, recipients: []string{"rob@two.example"}},
	{name: "Resent", header: "From: alice@one.example\r\nTo: rob@two.example\r\nResent-From: fwd@three.example\r\n" +
		"Resent-Sender: fwdsec@three.example\r\nResent-To: rt@four.example\r\nResent-Cc: rc@four.example\r\nResent-Bcc: rb@four.example",
		senders:    []string{"alice@one.example", "fwd@three.example", "fwdsec@three.example"},
		recipients: []string{"rob@two.example", "rt@four.example", "rc@four.example", "rb@four.example"}},
	{name: "trace headers", header: "Delivered-To: dt@five.example\r\nX-Original-To: xo@five.example\r\nEnvelope-To: et@five.example\r\n" +
		"X-Envelope-To: <xet@five.example>\r\nReceived: from a by b for <relayed@five.example>; Mon, 2 Feb 2026 09:00:00 +0000\r\n" +
		"Reply-To: replies@five.example\r\nFrom: alice@one.example\r\nTo: list@six.example",
		senders:    []string{"alice@one.example"},
		recipients: []string{"dt@five.example", "xo@five.example", "et@five.example", "xet@five.example", "list@six.example"}},
	{name: "several From mailboxes and fields, groups, repetitions", header: "From: first@seven.example, Second <second@seven.example>\r\n" +
		"From: third@seven.example\r\nTo: Team: g1@seven.example, G2 <g2@seven.example>;\r\nCc: cc@seven.example\r\nCc: CC@Seven.example, cc2@seven.example",
		senders:    []string{"first@seven.example", "second@seven.example", "third@seven.example"},
		recipients: []string{"g1@seven.example", "g2@seven.example", "cc@seven.example", "cc2@seven.example"}},
	{name: "obsolete syntax", header: "From  : Pete(his account)@silly.test(his host)\r\n" +
		"To: <@relay1.example,@relay2.example:routed@eight.example>, jdoe@test  . example\r\n" +
		"Cc\r\n : Folded <folded@eight.example>\r\nBcc: \"john\".\"doe\"@eight.example,\r\n , \"a@b.example\" <named@eight.example>",
		senders:    []string{"pete@silly.test"},
		recipients: []string{"routed@eight.example", "jdoe@test.example", "folded@eight.example", "john.doe@eight.example", "named@eight.example"}},
	{name: "display names and local parts alone are not addresses", header: "From: \"xxxxx@xxxxx\" <matmail>\r\nTo: \"shown@nine.example\" <real@nine.example>, root",
		recipients: []string{"real@nine.example"}},
	{name: "quoted local part", header: "From: \"John Doe\"@example.com\r\nTo: \"plain\"@example.com",
		senders: []string{`"john doe"@example.com`}, recipients: []string{"plain@example.com"}},
	{name: "xn-- and Unicode domain", header: "From: kim@xn--bcher-kva.example\r\nTo: =?utf-8?q?J=C3=B6rg?= <jörg@Bücher.example>",
		senders: []string{"kim@xn--bcher-kva.example"}, recipients: []string{"jörg@xn--bcher-kva.example"}},
	{name: "envelope recipients", header: "From: alice@one.example\r\nTo: rob@two.example", envelope: []string{"<Bcc-Only@Ten.example>"},
		senders: []string{"alice@one.example"}, recipients: []string{"rob@two.example", "bcc-only@ten.example"}},
}

func (c roleCase) raw() []byte {
	return []byte(c.header + "\r\nSubject: " + c.name + "\r\nDate: Mon, 2 Feb 2026 09:00:00 +0000\r\n\r\nbody of " + c.name + "\r\n")
}

// roleFixture is the role cases stored in each of its tenants, with their ids in order.
type roleFixture struct {
	*fixture
	ids map[string][]int64
}

// newRoleFixture stores the role cases in tenant acme and in each of tenants (one
// archive: a tenant per subtest that changes the mail or places holds).
func newRoleFixture(t *testing.T, d database.Dialect, tenants ...string) *roleFixture {
	t.Helper()
	f := newFixture(t, d)
	rf := &roleFixture{fixture: f, ids: map[string][]int64{}}
	for _, tenant := range append([]string{"acme"}, tenants...) {
		var batch []*archive.Prepared
		for _, c := range roleCases {
			p, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: c.raw(), Envelope: c.envelope, Source: c.name})
			require.NoError(t, err)
			batch = append(batch, p)
		}
		res, err := f.arc.Commit(context.Background(), batch)
		require.NoError(t, err)
		for _, r := range res {
			require.False(t, r.Duplicate)
			rf.ids[tenant] = append(rf.ids[tenant], r.ID)
		}
	}
	return rf
}

// roleKeys lists every key of the role cases, each once.
func roleKeys() []string {
	var out []string
	for _, c := range roleCases {
		for _, k := range append(slices.Clone(c.senders), c.recipients...) {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// wantRoleScope counts the cases in which one of keys has a role; in reports whether
// case i is affected.
func wantRoleScope(keys []string) (archive.Scope, func(i int) bool) {
	var s archive.Scope
	hit := map[int]bool{}
	for i, c := range roleCases {
		sends := slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(c.senders, k) })
		receives := slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(c.recipients, k) })
		if sends {
			s.AsSender++
		}
		if receives {
			s.AsRecipient++
		}
		if sends || receives {
			s.Affected++
			hit[i] = true
		}
	}
	return s, func(i int) bool { return hit[i] }
}

// caseHasDomain reports whether one of case c's role keys has domain d.
func caseHasDomain(c roleCase, d string) bool {
	for _, k := range append(slices.Clone(c.senders), c.recipients...) {
		if analyzer.DomainOf(k) == d {
			return true
		}
	}
	return false
}

func TestAddressRoles(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		t.Run("assessment counts every role", func(t *testing.T) { testRoleAssess(t, d) })
		t.Run("request addresses in any form", func(t *testing.T) { testRoleRequestForms(t, d) })
		t.Run("holds block exactly what an erasure deletes", func(t *testing.T) { testRoleHolds(t, d) })
		t.Run("erase deletes exactly the scope", func(t *testing.T) { testRoleErase(t, d) })
		t.Run("corpus counts equal an independent parse", func(t *testing.T) { testRoleCorpus(t, d) })
	})
}

func testRoleAssess(t *testing.T, d database.Dialect) {
	f := newRoleFixture(t, d)
	ctx := context.Background()
	keys := append(roleKeys(), "relayed@five.example", "replies@five.example", "matmail@nine.example", "shown@nine.example")
	for _, k := range keys {
		want, _ := wantRoleScope([]string{k})
		got, holds, _, err := f.arc.Assess(ctx, "acme", []string{k})
		require.NoError(t, err)
		assert.Empty(t, holds)
		assert.Equal(t, want, got, "assessment of %s", k)
		scope, err := f.arc.Scope(ctx, "acme", []string{k})
		require.NoError(t, err)
		assert.Equal(t, want, scope, "scope of %s", k)
	}
	want, _ := wantRoleScope(roleKeys())
	got, err := f.arc.Scope(ctx, "acme", roleKeys())
	require.NoError(t, err)
	assert.Equal(t, want, got, "every address at once")
}

// testRoleRequestForms: a request may give an address in any form the rule reads as the
// same key: case, unnecessary quotes, the Unicode or xn-- domain, comments.
func testRoleRequestForms(t *testing.T, d database.Dialect) {
	f := newRoleFixture(t, d)
	ctx := context.Background()
	for form, key := range map[string]string{
		" Alice@ONE.example ":               "alice@one.example",
		`"John Doe"@Example.COM`:            `"john doe"@example.com`,
		`"plain"@example.com`:               "plain@example.com",
		"kim@bücher.example":                "kim@xn--bcher-kva.example",
		"JÖRG@xn--bcher-kva.example":        "jörg@xn--bcher-kva.example",
		"pete(comment)@silly.test.":         "pete@silly.test",
		"Bcc-Only@ten.example":              "bcc-only@ten.example",
		"john.(obsolete) doe@eight.example": "john.doe@eight.example",
	} {
		want, _ := wantRoleScope([]string{key})
		require.Positive(t, want.Affected, key)
		got, err := f.arc.Scope(ctx, "acme", []string{form})
		require.NoError(t, err)
		assert.Equal(t, want, got, "scope of %q (key %s)", form, key)
	}
}

// testRoleHolds: an address hold blocks every message in which the address has a role,
// a domain hold every message in which an address of the domain has one; erasing every
// address erases exactly the rest.
func testRoleHolds(t *testing.T, d database.Dialect) {
	holds := []hold{
		{"LH-1", "address", "sec@one.example", "active"},        // Sender only
		{"LH-2", "address", "xet@five.example", "active"},       // X-Envelope-To only
		{"LH-3", "domain", "xn--bcher-kva.example", "active"},   // both spellings
		{"LH-4", "address", `"john doe"@example.com`, "active"}, // quoted local part
		{"LH-5", "address", "fwdsec@three.example", "active"},   // Resent-Sender
		{"LH-6", "address", "relayed@five.example", "active"},   // Received for: no role
		{"LH-7", "domain", "eight.example", "active"},           // obsolete syntax
		{"LH-8", "address", "bounce@lists.example", "active"},   // Return-Path
	}
	covers := func(c roleCase, h hold) bool {
		if h.id == "LH-6" {
			return false
		}
		if h.typ == "domain" {
			return caseHasDomain(c, h.value)
		}
		return slices.Contains(c.senders, h.value) || slices.Contains(c.recipients, h.value)
	}
	tenants := make([]string, len(holds))
	for i, h := range holds {
		tenants[i] = strings.ToLower(h.id)
	}
	f := newRoleFixture(t, d, tenants...)
	for i, h := range holds {
		tenant := tenants[i]
		t.Run(h.id, func(t *testing.T) {
			ctx := context.Background()
			f.placeHolds(t, tenant, h)
			for i, c := range roleCases {
				ks := append(slices.Clone(c.senders), c.recipients...)
				if len(ks) == 0 {
					continue
				}
				got, _, err := f.arc.BlockingHolds(ctx, tenant, ks[:1])
				require.NoError(t, err)
				// The case's own first key blocks when the hold covers this case (or any
				// other message of that key, which the expectation below includes).
				_, affected := wantRoleScope(ks[:1])
				wantBlocked := false
				for j, o := range roleCases {
					wantBlocked = wantBlocked || affected(j) && covers(o, h)
				}
				assert.Equal(t, wantBlocked, len(got) == 1, "case %d %q: hold %v; got %v", i, c.name, h, got)
			}
			req := archive.EraseRequest{Tenant: tenant, RequestID: "GDPR-" + h.id, Addresses: roleKeys(), Today: time.Now()}
			_, err := f.arc.Erase(ctx, req)
			require.NoError(t, err)
			var want []int64
			for i, c := range roleCases {
				if len(c.senders)+len(c.recipients) > 0 && !covers(c, h) {
					want = append(want, f.ids[tenant][i])
				}
			}
			assert.Equal(t, want, f.erasedIDs(t, req.RequestID), "erased while %s holds", h.id)
		})
	}
}

func testRoleErase(t *testing.T, d database.Dialect) {
	keys := []string{"sec@one.example", "bounce@lists.example", "et@five.example", "third@seven.example",
		"folded@eight.example", `"john doe"@example.com`, "jörg@bücher.example", "bcc-only@ten.example"}
	tenants := make([]string, len(keys))
	for i := range keys {
		tenants[i] = fmt.Sprintf("erase%d", i)
	}
	f := newRoleFixture(t, d, tenants...)
	ctx := context.Background()
	for i, key := range keys {
		req := archive.EraseRequest{Tenant: tenants[i], RequestID: "GDPR-" + tenants[i], Addresses: []string{key}, Today: time.Now(), Batch: 2}
		n, err := f.arc.Erase(ctx, req)
		require.NoError(t, err)
		k, err := analyzer.Normalize(key)
		require.NoError(t, err)
		want, affected := wantRoleScope([]string{k})
		var ids []int64
		for j := range roleCases {
			if affected(j) {
				ids = append(ids, f.ids[tenants[i]][j])
			}
		}
		assert.Equal(t, want.Affected, n, "erased count for %s", key)
		assert.Equal(t, ids, f.erasedIDs(t, req.RequestID), "erased messages for %s", key)
	}
}

// corpusFields splits a message's header on its own, as a tolerant reader does: a line
// that starts with white space or has no colon continues the field above; an mbox
// "From " line is skipped; the name keeps any white space before the colon.
func corpusFields(msg string) []analyzer.Field {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	if end := strings.Index(msg, "\n\n"); end >= 0 {
		msg = msg[:end]
	}
	var fields []analyzer.Field
	for i, line := range strings.Split(msg, "\n") {
		if i == 0 && strings.HasPrefix(line, "From ") && !strings.HasPrefix(strings.TrimLeft(line[5:], " \t"), ":") {
			continue
		}
		colon := strings.IndexByte(line, ':')
		continuation := line != "" && (line[0] == ' ' || line[0] == '\t')
		if len(fields) > 0 && (continuation || colon < 0) {
			fields[len(fields)-1].Value += "\r\n" + line
			continue
		}
		if colon < 0 {
			continue
		}
		fields = append(fields, analyzer.Field{Name: line[:colon], Value: line[colon+1:]})
	}
	return fields
}

// testRoleCorpus stores the corpus and, for every address the rule finds in it, compares
// the assessment with counts made here from analyzer.Roles over each stored message.
func testRoleCorpus(t *testing.T, d database.Dialect) {
	f := newFixture(t, d)
	ctx := context.Background()
	senders, recipients, affected := map[string]int{}, map[string]int{}, map[string]int{}
	var batch []*archive.Prepared
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		p, err := f.arc.Prepare(archive.Incoming{Tenant: "acme", Raw: raw, Source: path})
		if errors.Is(err, archive.ErrNotMessage) {
			continue
		}
		require.NoError(t, err, path)
		batch = append(batch, p)
	}
	res, err := f.arc.Commit(ctx, batch)
	require.NoError(t, err)
	for i, r := range res {
		if r.Duplicate {
			continue
		}
		raw, err := f.arc.Raw(ctx, "acme", r.ID)
		require.NoError(t, err, batch[i].In.Source)
		s, rc := map[string]bool{}, map[string]bool{}
		for _, a := range analyzer.Roles(corpusFields(string(raw))) {
			if a.Role == analyzer.Sender {
				s[a.Key] = true
			} else {
				rc[a.Key] = true
			}
		}
		for k := range s {
			senders[k]++
		}
		for k := range rc {
			recipients[k]++
		}
		for k := range s {
			affected[k]++
		}
		for k := range rc {
			if !s[k] {
				affected[k]++
			}
		}
	}
	require.NotEmpty(t, affected)
	t.Logf("%d messages, %d addresses", len(res), len(affected))
	for k, n := range affected {
		got, _, _, err := f.arc.Assess(ctx, "acme", []string{k})
		require.NoError(t, err, k)
		assert.Equal(t, [3]int{senders[k], recipients[k], n}, [3]int{got.AsSender, got.AsRecipient, got.Affected},
			"%s: got (sender, recipient, affected) %v", k, got)
	}
}
