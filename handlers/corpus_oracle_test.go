package handlers_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jhillyerd/enmime/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/archive/archivetest"
)

// This file reads the corpus without the archive: the address roles by the rule
// (analyzer.Roles over a header split here as docs/address-rule.md says the archive
// splits it), checked once more against net/mail, and each message's attachments read
// with enmime. The corpus tests compare what the archive stores and answers with it; the
// oracle never reads the database.

// corpusMessage is one distinct message of the corpus (files with equal SHA-256 are one
// message, as the importer stores them once).
type corpusMessage struct {
	path        string // the first file of the corpus with these bytes
	rel         string // path relative to the corpus directory
	raw         []byte
	digest      string              // hex SHA-256 of raw, the archive's metadata.digest
	senders     map[string]bool     // keys with the sender role
	recipients  map[string]bool     // keys with the recipient role
	attachments int                 // enmime's envelope, by the archive's selection
	netMail     map[string][]string // keys net/mail read, by field name (a check of the rule)
}

// has reports whether key has a role in m.
func (m *corpusMessage) has(key string) bool { return m.senders[key] || m.recipients[key] }

// corpusOracle is the corpus as the rule reads it.
type corpusOracle struct {
	dir      string
	messages []*corpusMessage // distinct messages, in file order
	keys     []string         // every key with a role in some message, sorted
	domains  []string         // analyzer.DomainOf of every key, sorted, distinct
}

// readCorpusOracle reads every corpus file.
func readCorpusOracle(t *testing.T) *corpusOracle {
	t.Helper()
	o := &corpusOracle{dir: archivetest.CorpusDir(t)}
	seen := map[[32]byte]bool{}
	keys, domains := map[string]bool{}, map[string]bool{}
	for _, path := range archivetest.CorpusFiles(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		sum := sha256.Sum256(raw)
		if seen[sum] {
			continue
		}
		seen[sum] = true
		rel, err := filepath.Rel(o.dir, path)
		require.NoError(t, err)
		m := &corpusMessage{path: path, rel: rel, raw: raw, digest: fmt.Sprintf("%x", sum),
			senders: map[string]bool{}, recipients: map[string]bool{}, netMail: map[string][]string{}}
		fields := ruleFields(mboxContent(raw))
		for _, a := range analyzer.Roles(fields) {
			if a.Role == analyzer.Sender {
				m.senders[a.Key] = true
			} else {
				m.recipients[a.Key] = true
			}
			keys[a.Key], domains[analyzer.DomainOf(a.Key)] = true, true
		}
		m.readNetMail(fields)
		m.attachments = enmimeAttachments(t, rel, mboxContent(raw))
		o.messages = append(o.messages, m)
	}
	o.keys, o.domains = sortedKeys(keys), sortedKeys(domains)
	return o
}

// byRel returns the message of a file.
func (o *corpusOracle) byRel(rel string) *corpusMessage {
	for _, m := range o.messages {
		if m.rel == rel {
			return m
		}
	}
	return nil
}

// only keeps the messages whose files the importer archived.
func (o *corpusOracle) only(archived func(*corpusMessage) bool) {
	o.messages = slices.DeleteFunc(o.messages, func(m *corpusMessage) bool { return !archived(m) })
	keys, domains := map[string]bool{}, map[string]bool{}
	for _, m := range o.messages {
		for _, set := range []map[string]bool{m.senders, m.recipients} {
			for k := range set {
				keys[k], domains[analyzer.DomainOf(k)] = true, true
			}
		}
	}
	o.keys, o.domains = sortedKeys(keys), sortedKeys(domains)
}

// scope is what the oracle says an erasure of keys affects: the counts of archive.Scope
// and the affected messages.
func (o *corpusOracle) scope(keys ...string) (sender, recipient, attachments int, affected []*corpusMessage) {
	for _, m := range o.messages {
		s := slices.ContainsFunc(keys, func(k string) bool { return m.senders[k] })
		r := slices.ContainsFunc(keys, func(k string) bool { return m.recipients[k] })
		if !s && !r {
			continue
		}
		sender, recipient = sender+boolInt(s), recipient+boolInt(r)
		attachments += m.attachments
		affected = append(affected, m)
	}
	return sender, recipient, attachments, affected
}

// domainKeys returns the keys whose domain is domain.
func (o *corpusOracle) domainKeys(domain string) []string {
	var out []string
	for _, k := range o.keys {
		if analyzer.DomainOf(k) == domain {
			out = append(out, k)
		}
	}
	return out
}

// mboxContent is raw without the mbox "From sender date" line a saved message may start
// with ("From  : x" with white space before the colon is a field, RFC 5322 section 4.5).
func mboxContent(raw []byte) []byte {
	if rest, ok := bytes.CutPrefix(raw, []byte("From ")); ok && !bytes.HasPrefix(bytes.TrimLeft(rest, " \t"), []byte(":")) {
		if _, after, found := bytes.Cut(raw, []byte("\n")); found {
			return after
		}
	}
	return raw
}

// ruleFields splits the top-level header into fields as docs/address-rule.md says the
// archive does ("Where the roles are kept"): names as written (white space before the colon
// kept), a line that starts with white space or has no colon continuing the field above,
// a field name whose colon was folded onto the next line joined to it; the header ends at
// the first empty line. Raw 8-bit bytes that are not UTF-8 are read as windows-1252 (the
// corpus declares no other charset for its address fields; the test says so if one does).
func ruleFields(content []byte) []analyzer.Field {
	var fields []analyzer.Field
	lines := strings.Split(string(content), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		if line == "" {
			break
		}
		folded := line[0] == ' ' || line[0] == '\t'
		name, value, hasColon := strings.Cut(line, ":")
		if !hasColon && !folded && i+1 < len(lines) && isBareName(line) && strings.HasPrefix(strings.TrimLeft(lines[i+1], " \t"), ":") &&
			(lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
			_, value, _ = strings.Cut(strings.TrimRight(lines[i+1], "\r"), ":")
			fields = append(fields, analyzer.Field{Name: line, Value: raw8bit(value)})
			i++
			continue
		}
		if len(fields) > 0 && (folded || !hasColon) {
			fields[len(fields)-1].Value += "\r\n" + raw8bit(line)
			continue
		}
		if hasColon {
			fields = append(fields, analyzer.Field{Name: name, Value: raw8bit(value)})
		}
	}
	return fields
}

// isBareName reports whether line is a field name alone (printable ASCII, no colon),
// white space after it allowed.
func isBareName(line string) bool {
	name := strings.TrimRight(line, " \t")
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r > '~' || r == ':' })
}

// raw8bit reads a header line's bytes: UTF-8 when valid, else windows-1252.
func raw8bit(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out, err := charmap.Windows1252.NewDecoder().String(s)
	if err != nil {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return out
}

// netMailFields are the sender and recipient fields of the rule that net/mail reads too.
var netMailFields = map[string]analyzer.Role{
	"from": analyzer.Sender, "sender": analyzer.Sender, "resent-from": analyzer.Sender, "resent-sender": analyzer.Sender,
	"return-path": analyzer.Sender, "to": analyzer.Recipient, "cc": analyzer.Recipient, "bcc": analyzer.Recipient,
	"resent-to": analyzer.Recipient, "resent-cc": analyzer.Recipient, "resent-bcc": analyzer.Recipient,
	"delivered-to": analyzer.Recipient, "x-original-to": analyzer.Recipient, "envelope-to": analyzer.Recipient,
	"x-envelope-to": analyzer.Recipient,
}

// readNetMail records, by field, the keys of the addresses net/mail finds in each
// sender or recipient field it can parse (a field it refuses is left out).
func (m *corpusMessage) readNetMail(fields []analyzer.Field) {
	for _, f := range fields {
		name := strings.ToLower(strings.TrimSpace(f.Name))
		if _, ok := netMailFields[name]; !ok {
			continue
		}
		list, err := mail.ParseAddressList(strings.NewReplacer("\r\n", "", "\n", "").Replace(f.Value))
		if err != nil {
			continue
		}
		for _, a := range list {
			addr := strings.ToLower(a.Address)
			if key, err := analyzer.Normalize(addr); err == nil {
				addr = key
			} else {
				addr = "refused by the rule: " + addr
			}
			m.netMail[name] = append(m.netMail[name], addr)
		}
	}
}

// checkNetMail asserts that every address net/mail finds in a field is among the rule's
// keys of that field's role in m.
func (m *corpusMessage) checkNetMail(t *testing.T) {
	t.Helper()
	for name, keys := range m.netMail {
		set := m.recipients
		if netMailFields[name] == analyzer.Sender {
			set = m.senders
		}
		for _, k := range keys {
			assert.True(t, set[k], "%s: net/mail reads %q in %s, the rule's %s keys are %v",
				m.rel, k, name, netMailFields[name], sortedKeys(set))
		}
	}
}

// enmimeAttachments counts a message's attachments as the archive selects them
// (archive/parse.go attachmentsOf) from enmime's own envelope: the attachment, inline and
// other parts that have a file name or the attachment disposition, except a text part
// without a file name when the envelope has inlines (a multipart's always has, possibly
// empty): that is a body. A message enmime cannot read has none.
func enmimeAttachments(t *testing.T, rel string, content []byte) int {
	t.Helper()
	env, err := enmime.ReadEnvelope(bytes.NewReader(content))
	if err != nil {
		t.Logf("%s: enmime cannot read it (%v): no attachments counted", rel, err)
		return 0
	}
	n := 0
	for _, p := range slices.Concat(env.Attachments, env.Inlines, env.OtherParts) {
		if p.FileName == "" && (p.Disposition != "attachment" || env.Inlines != nil && strings.HasPrefix(p.ContentType, "text/")) {
			continue
		}
		n++
	}
	return n
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
