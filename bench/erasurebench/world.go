package main

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// benchTenant is the one tenant of the generated archive: every row is in it, so the
// tenant filter prunes nothing.
const benchTenant = "acme"

// subjectAddresses are the five addresses of the data subject: a free-mail address, a
// work address, a second free-mail address, an address at a partner and a private domain.
var subjectAddresses = []string{
	"maria.keller@gmail.com", "m.keller@corp.example.com", "maria.keller@web.de",
	"mkeller@partner042.example.net", "maria@keller-family.example.org",
}

// Domain classes of the background address pool.
const (
	classInternal = iota // the tenant's own domain
	classFreemail        // a public mail provider
	classPartner         // one of the partner companies
)

const (
	internalDomain = "corp.example.com"
	partnerDomains = 500
)

var freemailDomains = []string{"gmail.com", "outlook.com", "yahoo.com", "hotmail.com", "gmx.de", "web.de", "icloud.com", "proton.me"}

var (
	firstNames = []string{"anna", "ben", "clara", "david", "emma", "felix", "greta", "hugo", "ida", "jonas", "lena", "max", "nora", "paul", "sara", "tom"}
	lastNames  = []string{"bauer", "fischer", "hoffmann", "koch", "meyer", "mueller", "richter", "schulz", "wagner", "weber", "wolf", "zimmermann"}
)

// poolAddress is one address of the background pool.
type poolAddress struct {
	addr, domain string
	class        int
}

// world is the generated archive: a background of messages between pool addresses that
// never names the data subject, the subject's messages scattered through it, and the
// tenant's legal holds. It is the same for the same sizes on every database.
type world struct {
	messages int // metadata rows in all
	pool     []poolAddress
	subject  []subjectMessage
	stride   int // subject message j has id (j+1)*stride
	holds    []holdRow
	start    time.Time     // arrival of message 1; message i arrives (i-1)*spacing later
	spacing  time.Duration // whole seconds
}

// subjectMessage is a message naming the data subject, with its rcpt rows.
type subjectMessage struct {
	id          int64
	from        string
	rcpts       []rcptRow
	attachments int
	hidden      string // "" when visible; "deleted" (purged) or "erased" otherwise
}

type rcptRow struct{ to, kind string }

// holdRow is one legal_holds row.
type holdRow struct {
	id, typ, value, status string
}

// worldSpan is the arrival span of the archive.
const worldSpan = 3 * 365 * 24 * time.Hour

// shape gives the sizes of a world.
type shape struct {
	messages  int  // metadata rows in all
	addresses int  // background address pool
	subject   int  // messages naming the data subject, among the messages
	holds     int  // legal_holds rows
	hidden    bool // make 3 % of the subject's messages purged or erased already
}

func newWorld(s shape) *world {
	w := &world{messages: s.messages, pool: addressPool(s.addresses),
		start: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC), spacing: max(time.Second, (worldSpan / time.Duration(s.messages)).Truncate(time.Second))}
	w.stride = s.messages / max(s.subject, 1)
	rng := rand.New(rand.NewSource(7))
	for j := range s.subject {
		m := w.subjectMessage(rng, int64(j+1)*int64(w.stride))
		if !s.hidden {
			m.hidden = ""
		}
		w.subject = append(w.subject, m)
	}
	w.holds = w.makeHolds(rng, s.holds)
	return w
}

// addressPool returns n addresses: 40 % at the tenant's domain, 25 % at a free-mail
// provider, 35 % at one of 500 partner domains, with made-up names that carry their
// index (so no two are equal and none is a subject address).
func addressPool(n int) []poolAddress {
	out := make([]poolAddress, n)
	for i := range out {
		local := fmt.Sprintf("%s.%s%d", firstNames[i%len(firstNames)], lastNames[(i/len(firstNames))%len(lastNames)], i)
		var p poolAddress
		switch c := (i * 7) % 20; {
		case c < 8:
			p = poolAddress{domain: internalDomain, class: classInternal}
		case c < 13:
			p = poolAddress{domain: freemailDomains[i%len(freemailDomains)], class: classFreemail}
		default:
			p = poolAddress{domain: fmt.Sprintf("partner%03d.example.net", i%partnerDomains), class: classPartner}
		}
		p.addr = local + "@" + p.domain
		out[i] = p
	}
	return out
}

// correspondent picks a pool address the subject writes with: never one at a partner
// domain, so that the holds on partners (see makeHolds) cover none of her mail.
func (w *world) correspondent(rng *rand.Rand) string {
	for {
		if p := w.pool[rng.Intn(len(w.pool))]; p.class != classPartner {
			return p.addr
		}
	}
}

// subjectMessage makes the message with the given id: 35 % sent by one subject address,
// 45 % received by one or two (sometimes also as the envelope recipient), 20 % both (sent
// from one subject address to another); 3 % of them are purged or already erased.
func (w *world) subjectMessage(rng *rand.Rand, id int64) subjectMessage {
	pick := func() string { return subjectAddresses[rng.Intn(len(subjectAddresses))] }
	m := subjectMessage{id: id, attachments: attachmentCount(rng.Intn(100))}
	switch r := rng.Intn(100); {
	case r < 35:
		m.from = pick()
		m.rcpts = []rcptRow{{w.correspondent(rng), archive.KindTo}}
		if rng.Intn(3) == 0 {
			m.rcpts = append(m.rcpts, rcptRow{w.correspondent(rng), archive.KindCc})
		}
	case r < 80:
		m.from = w.correspondent(rng)
		a := pick()
		m.rcpts = []rcptRow{{a, archive.KindTo}}
		if b := pick(); b != a && rng.Intn(4) == 0 {
			m.rcpts = append(m.rcpts, rcptRow{b, archive.KindCc})
		}
		if rng.Intn(5) == 0 {
			m.rcpts = append(m.rcpts, rcptRow{a, archive.KindEnvelope})
		}
	default:
		m.from = pick()
		to := pick()
		m.rcpts = []rcptRow{{to, archive.KindTo}, {w.correspondent(rng), archive.KindCc}}
		if to == m.from {
			m.rcpts[0].kind = archive.KindBcc
		}
	}
	switch rng.Intn(100) {
	case 0:
		m.hidden = "deleted"
	case 1, 2:
		m.hidden = "erased"
	}
	return m
}

// attachmentCount maps r in [0, 100) to an attachment count: 70 % none, 20 % one, 7 %
// two, 3 % three to five. The background rows use the same mapping in SQL.
func attachmentCount(r int) int {
	switch {
	case r < 70:
		return 0
	case r < 90:
		return 1
	case r < 97:
		return 2
	}
	return 3 + r%3
}

// blockingHold is the hold the blocked case adds: a litigation hold on the subject's work
// address.
var blockingHold = holdRow{id: "LH-BLOCK", typ: "address", value: subjectAddresses[1], status: "active"}

// makeHolds returns n holds: 20 % released (on the subject's own addresses and domains,
// and on partners: a released hold never blocks), the others active, 3 in 4 on a partner
// address and 1 in 4 on a partner domain, none of which the subject's mail names.
func (w *world) makeHolds(rng *rand.Rand, n int) []holdRow {
	var partners []poolAddress
	for _, p := range w.pool {
		if p.class == classPartner && !slices.ContainsFunc(subjectAddresses, func(a string) bool { return domainOf(a) == p.domain }) {
			partners = append(partners, p)
		}
	}
	released := []string{subjectAddresses[0], subjectAddresses[1], "keller-family.example.org", internalDomain}
	out := make([]holdRow, n)
	for i := range out {
		h := holdRow{id: fmt.Sprintf("LH-%05d", i+1), typ: "address", status: "active"}
		p := partners[rng.Intn(len(partners))]
		switch {
		case i%5 == 4:
			h.status, h.value = "released", released[(i/5)%len(released)]
			if !isAddress(h.value) {
				h.typ = "domain"
			}
		case i%4 == 3:
			h.typ, h.value = "domain", p.domain
		default:
			h.value = p.addr
		}
		out[i] = h
	}
	return out
}

func isAddress(s string) bool { return strings.Contains(s, "@") }

func domainOf(addr string) string {
	_, domain, _ := strings.Cut(addr, "@")
	return domain
}

// expected is what an erasure of the subject's addresses affects, from the generator's
// knowledge: the background never names the subject.
func (w *world) expected() archive.Scope {
	var s archive.Scope
	for _, m := range w.subject {
		if m.hidden != "" {
			continue
		}
		sends := slices.Contains(subjectAddresses, m.from)
		receives := slices.ContainsFunc(m.rcpts, func(r rcptRow) bool { return slices.Contains(subjectAddresses, r.to) })
		if sends {
			s.AsSender++
		}
		if receives {
			s.AsRecipient++
		}
		s.Affected++
		s.Attachments += m.attachments
	}
	return s
}

// rcptRows counts the rcpt rows of the subject's messages.
func (w *world) rcptRows() int {
	n := 0
	for _, m := range w.subject {
		n += len(m.rcpts)
	}
	return n
}

// arrival is when message id arrived.
func (w *world) arrival(id int64) time.Time {
	return w.start.Add(time.Duration(id-1) * w.spacing).Truncate(time.Second)
}
