package handlers_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain/erasure"
)

// TestCorpusOracleAgreesWithNetMail: every address net/mail reads in a sender or recipient
// field of a corpus file is among the rule's keys of that role in the file (the rule reads
// more: obsolete syntax, broken lists, RFC 6532).
func TestCorpusOracleAgreesWithNetMail(t *testing.T) {
	t.Parallel()
	o := readCorpusOracle(t)
	checked := 0
	for _, m := range o.messages {
		m.checkNetMail(t)
		checked += len(m.netMail)
	}
	require.Positive(t, checked, "net/mail read some fields")
	t.Logf("%d distinct messages, %d keys, %d domains, %d fields read by net/mail", len(o.messages), len(o.keys), len(o.domains), checked)
}

// TestCorpusAddressCounts: each message's address_role rows and attachment count are the
// oracle's; for every key of the corpus, archive.Scope and archive.Assess (what the
// assessor runs) count the messages in which it has the sender role, the recipient role,
// the distinct affected messages and their attachments exactly as the oracle does, and the
// from= and to= filters find exactly those messages; for corpusHandful, so does an erasure
// request's assessment over HTTP.
func TestCorpusAddressCounts(t *testing.T) {
	t.Parallel()
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCorpusFixture(t, d)
		f.checkStoredRoles(t)
		f.checkAttachments(t)
		for _, key := range f.oracle.keys {
			f.checkScope(t, key)
		}
		f.runBackground()
		for _, a := range corpusHandful {
			f.checkAssessmentOverHTTP(t, a.written, a.key)
		}
	})
}

// corpusHandful are addresses checked end to end over HTTP, each given in another form
// than its key: the flow test's data subject, the one with the most mail, one with the
// most attachments, two with UTF-8 local parts and international domains (RFC 6532: the
// request in Unicode, the key in xn-- form), and one whose domain has no dot. The corpus
// has no quoted local part.
var corpusHandful = []struct{ written, key string }{
	{" RaasDnil@Gmail.com ", corpusSubject},
	{"SJ@Acts.HU", "sj@acts.hu"},
	{"foo@EXAMPLE.com", "foo@example.com"},
	{"JDÖE@Mächine.example", "jdöe@xn--mchine-bua.example"},
	{"märy@XN--EXMPLE-CUA.net.", "märy@xn--exmple-cua.net"},
	{"xxxxx@XXXXX", "xxxxx@xxxxx"},
}

// checkAssessmentOverHTTP creates an erasure request for written over the API, lets the
// assessor run and compares its counts with the oracle's for key.
func (f *corpusFixture) checkAssessmentOverHTTP(t *testing.T, written, key string) {
	t.Helper()
	s, r, att, affected := f.oracle.scope(key)
	require.NotEmpty(t, affected, "%s is a corpus address", key)
	req := f.create(auditorUser, written)
	assert.Equal(t, []string{key}, req.EmailAddresses, "the request keeps the key of %q", written)
	req = f.await(req.RequestID, erasure.StatusPendingApproval)
	assert.Equal(t, []int{s, r, att}, []int{req.EmailsAsSender, req.EmailsAsRecipient, req.AttachmentsCount},
		"%s: sender, recipient, attachments of %v", written, relNames(affected))
}

// checkAttachments compares each message's attachment count, which Scope sums, with the
// oracle's reading of its file.
func (f *corpusFixture) checkAttachments(t *testing.T) {
	t.Helper()
	msgs, _, err := f.arc.Search(t.Context(), archive.Query{Tenant: app.DefaultTenant, Limit: 10_000})
	require.NoError(t, err)
	for _, m := range msgs {
		assert.Equal(t, f.byID[m.ID].attachments, m.Attachments, "%s: attachments", f.byID[m.ID].rel)
	}
}

// checkStoredRoles compares the address_role rows of each message with the oracle's
// roles of its file: no key the oracle does not know is counted anywhere.
func (f *corpusFixture) checkStoredRoles(t *testing.T) {
	t.Helper()
	rows, err := f.db.QueryContext(t.Context(), `SELECT id, role, addr FROM address_role`)
	require.NoError(t, err)
	defer rows.Close()
	stored := map[int64][]string{}
	for rows.Next() {
		var id int64
		var role int
		var addr string
		require.NoError(t, rows.Scan(&id, &role, &addr))
		stored[id] = append(stored[id], analyzer.Role(role).String()+" "+addr)
	}
	require.NoError(t, rows.Err())
	for id, m := range f.byID {
		want := []string{}
		for k := range m.senders {
			want = append(want, analyzer.Sender.String()+" "+k)
		}
		for k := range m.recipients {
			want = append(want, analyzer.Recipient.String()+" "+k)
		}
		assert.ElementsMatch(t, want, stored[id], "%s: address_role rows", m.rel)
		delete(stored, id)
	}
	for id, roles := range stored {
		assert.Fail(t, "roles of a message that is not the corpus's", "message %d: %v", id, roles)
	}
}

// checkScope compares the archive's scope of an erasure of keys with the oracle's.
func (f *corpusFixture) checkScope(t *testing.T, keys ...string) {
	t.Helper()
	ctx := t.Context()
	s, r, att, affected := f.oracle.scope(keys...)
	want := archive.Scope{AsSender: s, AsRecipient: r, Attachments: att, Affected: len(affected)}
	got, err := f.arc.Scope(ctx, app.DefaultTenant, keys)
	require.NoError(t, err)
	assert.Equal(t, want, got, "Scope(%q): files %v", keys, relNames(affected))
	assessed, holds, _, err := f.arc.Assess(ctx, app.DefaultTenant, keys)
	require.NoError(t, err)
	assert.Equal(t, want, assessed, "Assess(%q)", keys)
	assert.Empty(t, holds)
	var from, to []int64
	for _, k := range keys {
		from = append(from, f.search(t, archive.Query{From: k})...)
		to = append(to, f.search(t, archive.Query{To: k})...)
	}
	wantFrom, wantTo := f.roleIDs(keys, true), f.roleIDs(keys, false)
	assert.Equal(t, wantFrom, distinct(from), "from=%q: got %v; want %v", keys, f.names(distinct(from)), f.names(wantFrom))
	assert.Equal(t, wantTo, distinct(to), "to=%q: got %v; want %v", keys, f.names(distinct(to)), f.names(wantTo))
}

// roleIDs returns the ids of the messages in which one of keys is a sender (else a
// recipient), sorted.
func (f *corpusFixture) roleIDs(keys []string, sender bool) []int64 {
	var msgs []*corpusMessage
	for _, m := range f.oracle.messages {
		set := m.recipients
		if sender {
			set = m.senders
		}
		if slices.ContainsFunc(keys, func(k string) bool { return set[k] }) {
			msgs = append(msgs, m)
		}
	}
	return f.idsOf(msgs)
}
