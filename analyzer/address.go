// Package analyzer turns a parsed message into what the archive indexes: the address
// roles that answer "whose email is this" and the words that search matches. It is
// written once, in Go, so that every database stores and intersects the same facts.
//
// The address rule (docs/address-rule.md):
//
//  1. Sender: every mailbox of every From field, Sender, Resent-From, Resent-Sender and
//     Return-Path (the envelope sender of imported mail); MAIL FROM for SMTP ingest.
//  2. Recipient: every mailbox of To, Cc, Bcc, Resent-To, Resent-Cc, Resent-Bcc, and of
//     the trace fields that carry envelope recipients: Delivered-To, X-Original-To,
//     Envelope-To, X-Envelope-To (never "Received: ... for"); RCPT TO for SMTP ingest.
//     Group members count; every repetition of a field counts.
//  3. Syntax: RFC 5322 with its obsolete syntax, RFC 2047 in display names only, RFC 6532
//     UTF-8 addresses. A display name is never an address. Each element of a list is
//     parsed on its own, so a broken list still yields every mailbox it holds.
//  4. Matching: by key (Normalize): the local part lower-cased, unquoted when the quotes
//     were unnecessary; the domain mapped by IDNA (UTS #46) to its ASCII form.
//
// The package imports nothing of mailledger's: the archive calls it.
package analyzer

import "fmt"

// Role is what an address is to a message.
type Role int

// The roles. The zero Role is none.
const (
	Sender Role = iota + 1
	Recipient
)

// String returns "sender" or "recipient".
func (r Role) String() string {
	switch r {
	case Sender:
		return "sender"
	case Recipient:
		return "recipient"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Mailbox is one address found in a header.
type Mailbox struct {
	// Key is the match key (see Normalize): the one form every comparison uses.
	Key string
	// Written is the address as written, UTF-8, without its comments, folding and route.
	Written string
	// Name is the display name, RFC 2047 decoded, UTF-8; when there is none, the text
	// of a comment after the address ("jdoe@one.test (John Doe)"). It may be empty.
	Name string
}

// Address is a mailbox with the role it has in a message and where it was found.
type Address struct {
	Mailbox
	// Header is the canonical name of the field it came from ("From", "Return-Path",
	// "Delivered-To"), or SourceMailFrom / SourceRcptTo for an SMTP envelope.
	Header string
	Role   Role
}

// Field is one header field as the message's header splitter hands it: the name as
// written (white space around it is ignored) and the raw value, folding included.
type Field struct {
	Name, Value string
}

// The Header of addresses that come from an SMTP envelope rather than a header field.
const (
	SourceMailFrom = "MAIL FROM"
	SourceRcptTo   = "RCPT TO"
)

// addrFieldRole is a header field that carries address roles.
type addrFieldRole struct {
	canonical string
	role      Role
}

// addrFields maps a lower-case field name to its canonical name and role (rules 1 and 2).
var addrFields = map[string]addrFieldRole{}

func init() {
	for _, name := range []string{"From", "Sender", "Resent-From", "Resent-Sender", "Return-Path"} {
		addrFields[addrLowerASCII(name)] = addrFieldRole{name, Sender}
	}
	for _, name := range []string{"To", "Cc", "Bcc", "Resent-To", "Resent-Cc", "Resent-Bcc",
		"Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To"} {
		addrFields[addrLowerASCII(name)] = addrFieldRole{name, Recipient}
	}
}

// Roles returns every address role of a message's header fields, given in message
// order: one Address per mailbox per field, repetitions included (see Distinct). A
// field name is matched without regard to case or to white space around it (obsolete
// white space before the colon, a name folded onto the next line).
func Roles(fields []Field) []Address {
	var out []Address
	for _, f := range fields {
		fr, ok := addrFields[addrLowerASCII(addrTrimSpace(f.Name))]
		if !ok {
			continue
		}
		for _, m := range ParseList(f.Value) {
			out = append(out, Address{Mailbox: m, Header: fr.canonical, Role: fr.role})
		}
	}
	return out
}

// EnvelopeRoles returns the roles an SMTP envelope gives: the reverse-path of MAIL
// FROM as Sender, each forward-path of RCPT TO as Recipient, with or without angle
// brackets. The null reverse-path "<>" and paths without a domain have no address.
func EnvelopeRoles(mailFrom string, rcptTo []string) []Address {
	var out []Address
	for _, m := range ParseList(mailFrom) {
		out = append(out, Address{Mailbox: m, Header: SourceMailFrom, Role: Sender})
	}
	for _, rcpt := range rcptTo {
		for _, m := range ParseList(rcpt) {
			out = append(out, Address{Mailbox: m, Header: SourceRcptTo, Role: Recipient})
		}
	}
	return out
}

// Distinct returns the first Address of each (Key, Role) pair, in order: the rows an
// index of address roles holds for one message.
func Distinct(as []Address) []Address {
	type keyRole struct {
		key  string
		role Role
	}
	seen := make(map[keyRole]bool, len(as))
	out := make([]Address, 0, len(as))
	for _, a := range as {
		k := keyRole{a.Key, a.Role}
		if !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}

// addrTrimSpace trims white space, CR and LF from both ends of a field name.
func addrTrimSpace(s string) string {
	for s != "" && addrIsSpace(s[0]) {
		s = s[1:]
	}
	for s != "" && addrIsSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// addrLowerASCII lower-cases ASCII letters only; it allocates only when it must (the
// address keys and the words' ASCII fast path).
func addrLowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
