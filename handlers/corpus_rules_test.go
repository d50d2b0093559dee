package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/legalhold"
	"github.com/mailledger/mailledger/identity"
)

// The corpus tests prove the address rule and the word analyzer on the whole shared
// corpus, on each database: what the archive counts, holds, shows and finds equals what an
// independent reading of the files says (corpus_oracle_test.go, corpus_words_test.go).

// corpusFixture is the API over one database with the whole corpus imported.
type corpusFixture struct {
	*gdprFixture
	oracle *corpusOracle
	ids    map[string]int64 // message id by corpusMessage.digest
	byID   map[int64]*corpusMessage
}

// newCorpusFixture imports the corpus into a fresh database of dialect d. The oracle keeps
// the messages the importer archived (a file it refuses is logged, and has no roles).
func newCorpusFixture(t *testing.T, d database.Dialect) *corpusFixture {
	t.Helper()
	f := &corpusFixture{gdprFixture: newGDPRFixture(t, d), oracle: readCorpusOracle(t)}
	rep, err := (&archive.Importer{Archive: f.arc}).Import(t.Context(), app.DefaultTenant, []string{f.oracle.dir})
	require.NoError(t, err)
	failed := map[string]bool{}
	for _, fail := range rep.Failures {
		t.Logf("not archived: %s", fail)
		failed[fail.Source] = true
	}
	f.oracle.only(func(m *corpusMessage) bool { return !failed[m.path] })
	msgs, _, err := f.arc.Search(t.Context(), archive.Query{Tenant: app.DefaultTenant, Limit: 10_000})
	require.NoError(t, err)
	f.ids, f.byID = map[string]int64{}, map[int64]*corpusMessage{}
	for _, m := range msgs {
		f.ids[m.Digest] = m.ID
	}
	for _, m := range f.oracle.messages {
		id, ok := f.ids[m.digest]
		require.True(t, ok, "%s is not in the archive", m.rel)
		f.byID[id] = m
	}
	require.Len(t, msgs, len(f.oracle.messages), "one message per distinct archived file")
	return f
}

// idsOf returns the ids of messages, sorted.
func (f *corpusFixture) idsOf(msgs []*corpusMessage) []int64 {
	out := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, f.ids[m.digest])
	}
	slices.Sort(out)
	return out
}

// names returns the corpus files of ids, for failure messages.
func (f *corpusFixture) names(ids []int64) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if m := f.byID[id]; m != nil {
			out = append(out, m.rel)
		} else {
			out = append(out, "?")
		}
	}
	return out
}

// search returns the ids of the messages q finds, sorted; it requires them all on one page.
func (f *corpusFixture) search(t *testing.T, q archive.Query) []int64 {
	t.Helper()
	q.Tenant, q.Limit = app.DefaultTenant, 10_000
	msgs, total, err := f.arc.Search(t.Context(), q)
	require.NoError(t, err, "%+v", q)
	require.Len(t, msgs, total, "%+v", q)
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids
}

// TestCorpusOracleAgreesWithNetMail: every address net/mail reads in a sender or recipient
// field of a corpus file is among the rule's keys of that role in the file (the rule reads
// more: obsolete syntax, broken lists, RFC 6532).
func TestCorpusOracleAgreesWithNetMail(t *testing.T) {
	o := readCorpusOracle(t)
	checked := 0
	for _, m := range o.messages {
		m.checkNetMail(t)
		checked += len(m.netMail)
	}
	require.Positive(t, checked, "net/mail read some fields")
	t.Logf("%d distinct messages, %d keys, %d domains, %d fields read by net/mail", len(o.messages), len(o.keys), len(o.domains), checked)
}

// TestCorpusAddressCounts: for every key of the corpus, archive.Scope and archive.Assess
// (what the assessor runs) count the messages in which it has the sender role, the
// recipient role, the distinct affected messages and their attachments exactly as the
// oracle does, and the from= and to= filters find exactly those messages.
func TestCorpusAddressCounts(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCorpusFixture(t, d)
		f.checkStoredRoles(t)
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

// TestCorpusHoldsEqualErasure: for every key of the corpus, the messages an active address
// hold on it keeps from purge are exactly those an erasure of it affects, and a plain
// user with that address sees exactly those; for every domain, a domain hold keeps exactly
// the messages an erasure of all the domain's keys affects (docs/address-rule.md: the
// domain of each key compared with the hold's).
func TestCorpusHoldsEqualErasure(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		f := newCorpusFixture(t, d)
		p := newHoldProbe(t, f)
		for _, key := range f.oracle.keys {
			_, _, _, affected := f.oracle.scope(key)
			want := f.idsOf(affected)
			if got, ok := p.held(t, legalhold.TypeAddress, key); ok {
				assert.Equal(t, want, got, "address hold on %s: got %v; want %v", key, f.names(got), f.names(want))
			}
			seen := f.search(t, archive.Query{Participant: key})
			assert.Equal(t, want, seen, "participant %s: got %v; want %v", key, f.names(seen), f.names(want))
		}
		for _, dom := range f.oracle.domains {
			keys := f.oracle.domainKeys(dom)
			_, _, _, affected := f.oracle.scope(keys...)
			want := f.idsOf(affected)
			if got, ok := p.held(t, legalhold.TypeDomain, dom); ok {
				assert.Equal(t, want, got, "domain hold on %s: got %v; want %v", dom, f.names(got), f.names(want))
			}
			byFilter := distinct(append(f.search(t, archive.Query{From: "@" + dom}), f.search(t, archive.Query{To: "@" + dom})...))
			assert.Equal(t, want, byFilter, "from=@%s or to=@%s", dom, dom)
			sc, err := f.arc.Scope(t.Context(), app.DefaultTenant, keys)
			require.NoError(t, err)
			assert.Equal(t, len(want), sc.Affected, "Scope of the %d keys of %s", len(keys), dom)
		}
		for i, a := range corpusHandful {
			f.checkVisibilityOverHTTP(t, fmt.Sprintf("corpus-user-%d", i), strings.TrimSpace(a.written), a.key)
		}
		f.checkErasures(t, "sj@acts.hu")
	})
}

// checkErasures places an address hold on held, then erases every key of the corpus in
// turn, in key order: each erasure marks exactly the messages it affects that no earlier
// one marked and the hold does not cover, and the held messages stay.
func (f *corpusFixture) checkErasures(t *testing.T, held string) {
	t.Helper()
	ctx := t.Context()
	_, err := f.app.LegalHolds.Place(ctx, app.DefaultTenant, app.PlaceHoldInput{Type: legalhold.TypeAddress, Value: held, Reason: "corpus erasures"}, probeActor)
	require.NoError(t, err)
	want := map[int64]string{} // the request that erases each message, "" for none
	for id, m := range f.byID {
		want[id] = ""
		if m.has(held) {
			continue
		}
		for _, k := range f.oracle.keys {
			if m.has(k) {
				want[id] = "corpus-" + k
				break
			}
		}
	}
	for _, k := range f.oracle.keys {
		n, err := f.arc.Erase(ctx, archive.EraseRequest{Tenant: app.DefaultTenant, RequestID: "corpus-" + k, Addresses: []string{k}, Today: time.Now()})
		require.NoError(t, err)
		wantN := 0
		for _, r := range want {
			wantN += boolInt(r == "corpus-"+k)
		}
		assert.Equal(t, wantN, n, "erasure of %s", k)
	}
	rows, err := f.db.QueryContext(ctx, f.db.Rebind(`SELECT id, COALESCE(erased_by, '') FROM metadata WHERE tenant_id = ?`), app.DefaultTenant)
	require.NoError(t, err)
	defer rows.Close()
	got := map[int64]string{}
	for rows.Next() {
		var id int64
		var by string
		require.NoError(t, rows.Scan(&id, &by))
		got[id] = by
	}
	require.NoError(t, rows.Err())
	for id, m := range f.byID {
		assert.Equal(t, want[id], got[id], "%s: erased by", m.rel)
	}
}

// checkVisibilityOverHTTP lists the messages as a plain user whose address is written and
// reads each corpus message as that user: exactly the messages an erasure of key affects
// are listed and readable, every other one is 404.
func (f *corpusFixture) checkVisibilityOverHTTP(t *testing.T, user, written, key string) {
	t.Helper()
	_, _, _, affected := f.oracle.scope(key)
	want := f.idsOf(affected)
	f.addUser(user, identity.RoleUser, written, "example.test")
	var listed []int64
	for _, m := range f.list(user, url.Values{"limit": {"500"}}).Messages {
		listed = append(listed, m.ID)
	}
	assert.Equal(t, want, distinct(listed), "%s lists %v; want %v", written, f.names(distinct(listed)), f.names(want))
	for id, m := range f.byID {
		resp, raw := f.getAs(user, fmt.Sprintf("/api/v1/messages/%d", id))
		wantStatus := http.StatusNotFound
		if slices.Contains(want, id) {
			wantStatus = http.StatusOK
		}
		assert.Equal(t, wantStatus, resp.StatusCode, "%s reads %s: %s", written, m.rel, raw)
	}
}

// holdProbe finds the messages one active hold covers by the archive's own hold
// condition: it places the hold, runs a purge of every message (a time past every
// retention) whose file deletions it records, and ends the purge's only batch before it
// changes anything, so the transaction rolls back. The messages not offered for deletion
// are the held ones. A message of another tenant, archived last (the highest id, the last
// candidate in id order), stops the batch: its file deletion fails.
type holdProbe struct {
	f     *corpusFixture
	arc   *archive.Archive // the fixture's database and files, with the recording store
	store *recordingStore
	all   []int64
}

// errProbeDone ends the probe's purge batch.
var errProbeDone = errors.New("hold probe: purge batch stopped")

// recordingStore is a BlobStore whose Delete records the key and deletes nothing; the
// stop key fails.
type recordingStore struct {
	archive.BlobStore
	mu      sync.Mutex
	deleted []string
	stop    string
}

func (s *recordingStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == s.stop {
		return errProbeDone
	}
	s.deleted = append(s.deleted, key)
	return nil
}

func newHoldProbe(t *testing.T, f *corpusFixture) *holdProbe {
	t.Helper()
	blobs, err := archive.NewLocalStore(filepath.Join(f.dataDir, "store"))
	require.NoError(t, err)
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(f.dataDir, "keys"))
	require.NoError(t, err)
	p := &holdProbe{f: f, store: &recordingStore{BlobStore: blobs}, all: slices.Sorted(maps.Keys(f.byID))}
	p.arc, err = archive.New(f.db, p.store, keys, archive.Options{})
	require.NoError(t, err)
	const tenant = "zz-probe"
	prepared, err := f.arc.Prepare(archive.Incoming{Tenant: tenant, Raw: archivetest.Message("probe@probe.test",
		[]string{"probe@probe.test"}, nil, "probe", "stops the probe's purge", time.Now()), Source: "probe"})
	require.NoError(t, err)
	res, err := f.arc.Commit(t.Context(), []*archive.Prepared{prepared})
	require.NoError(t, err)
	require.Greater(t, res[0].ID, p.all[len(p.all)-1], "the probe's message comes last")
	p.store.stop = archive.MessageKey(tenant, res[0].ID)
	return p
}

// held places an active hold of typ on value, returns the ids of the corpus messages it
// keeps from purge, sorted, and releases it. A hold refused is a failure, and false.
func (p *holdProbe) held(t *testing.T, typ, value string) ([]int64, bool) {
	t.Helper()
	ctx := t.Context()
	h, err := p.f.app.LegalHolds.Place(ctx, app.DefaultTenant, app.PlaceHoldInput{Type: typ, Value: value, Reason: "corpus probe"}, probeActor)
	if !assert.NoError(t, err, "%s hold on %s, a value of the rule: %s", typ, value, validationFields(err)) {
		return nil, false
	}
	require.Equal(t, value, h.Value, "the hold keeps the key")
	defer func() {
		_, err := p.f.app.LegalHolds.Release(ctx, app.DefaultTenant, h.ID, probeActor)
		require.NoError(t, err)
	}()
	p.store.deleted = p.store.deleted[:0]
	_, err = p.arc.Purge(ctx, time.Now().AddDate(100, 0, 0), archive.PurgeOptions{Batch: 1 << 20})
	require.ErrorIs(t, err, errProbeDone, "the purge reached the probe's message")
	offered := map[int64]bool{}
	for _, key := range p.store.deleted {
		offered[p.f.idOfKey(key)] = true
	}
	held := []int64{}
	for _, id := range p.all {
		if !offered[id] {
			held = append(held, id)
		}
	}
	return held, true
}

// idOfKey returns the id in a default-tenant message's storage key.
func (f *corpusFixture) idOfKey(key string) int64 {
	for id := range f.byID {
		if archive.MessageKey(app.DefaultTenant, id) == key {
			return id
		}
	}
	f.t.Fatalf("storage key %s is no corpus message's", key)
	return 0
}

// validationFields returns the fields of a domain.ValidationError ("" for another error).
func validationFields(err error) string {
	if ve, ok := errors.AsType[*domain.ValidationError](err); ok {
		return fmt.Sprint(ve.Fields)
	}
	return ""
}

func relNames(msgs []*corpusMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.rel
	}
	return out
}

func distinct(ids []int64) []int64 {
	out := append([]int64{}, ids...)
	slices.Sort(out)
	return slices.Compact(out)
}

// probeActor is who places and releases the probe's holds.
var probeActor = domain.Metadata{Actor: "corpus-probe", ClientIP: "127.0.0.1", UserAgent: "test"}
