package archivetest

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"time"
)

// Mail is a generated message together with what its generator knows about it, so that
// tests can count independently of the archive's parser.
type Mail struct {
	Raw         []byte
	Envelope    []string // SMTP RCPT TO addresses to pass with the message
	From        string   // lower-case sender address
	Recipients  []string // lower-case To, Cc, Bcc and envelope addresses, de-duplicated
	Attachments int
}

// Sends reports whether addr (lower-case) is the sender.
func (m Mail) Sends(addr string) bool { return m.From == addr }

// Receives reports whether addr (lower-case) is a recipient of any kind.
func (m Mail) Receives(addr string) bool { return slices.Contains(m.Recipients, addr) }

// Participants returns the sender and every recipient.
func (m Mail) Participants() []string { return append([]string{m.From}, m.Recipients...) }

// GenerateMail returns n distinct messages among the addresses of pool: a random sender,
// one to three To recipients, sometimes Cc, Bcc and envelope recipients, addresses written
// in mixed case and sometimes with display names, and zero to two attachments. The same
// rng state gives the same messages.
func GenerateMail(rng *rand.Rand, n int, pool []string, start time.Time) []Mail {
	out := make([]Mail, n)
	for i := range out {
		out[i] = generateOne(rng, pool, start.Add(time.Duration(i)*time.Minute), i)
	}
	return out
}

func generateOne(rng *rand.Rand, pool []string, sent time.Time, n int) Mail {
	pick := func(k int) []string {
		var got []string
		for range k {
			got = append(got, pool[rng.Intn(len(pool))])
		}
		return got
	}
	m := Mail{From: pool[rng.Intn(len(pool))]}
	to, cc, bcc, env := pick(1+rng.Intn(3)), pick(rng.Intn(2)), pick(rng.Intn(2)), pick(rng.Intn(2))
	for _, a := range slices.Concat(to, cc, bcc, env) {
		if !slices.Contains(m.Recipients, a) {
			m.Recipients = append(m.Recipients, a)
		}
	}
	m.Envelope = env
	m.Attachments = rng.Intn(3)
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\n", display(rng, m.From), headerList(rng, to))
	if len(cc) > 0 {
		fmt.Fprintf(&b, "Cc: %s\r\n", headerList(rng, cc))
	}
	if len(bcc) > 0 {
		fmt.Fprintf(&b, "Bcc: %s\r\n", headerList(rng, bcc))
	}
	fmt.Fprintf(&b, "Subject: generated %d\r\nDate: %s\r\nMessage-ID: <gen.%d.%d@archivetest>\r\nMIME-Version: 1.0\r\n",
		n, sent.UTC().Format(time.RFC1123Z), sent.UnixNano(), n)
	writeBody(&b, n, m.Attachments)
	m.Raw = []byte(b.String())
	return m
}

// display writes addr in mixed case, sometimes with a display name.
func display(rng *rand.Rand, addr string) string {
	mixed := strings.ToUpper(addr[:1]) + addr[1:]
	if rng.Intn(2) == 0 {
		return mixed
	}
	return fmt.Sprintf("\"%s\" <%s>", strings.Split(addr, "@")[0], mixed)
}

func headerList(rng *rand.Rand, addrs []string) string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = display(rng, a)
	}
	return strings.Join(out, ", ")
}

func writeBody(b *strings.Builder, n, attachments int) {
	if attachments == 0 {
		fmt.Fprintf(b, "Content-Type: text/plain; charset=utf-8\r\n\r\nbody of message %d\r\n", n)
		return
	}
	b.WriteString("Content-Type: multipart/mixed; boundary=\"GENBOUNDARY\"\r\n\r\n--GENBOUNDARY\r\n")
	fmt.Fprintf(b, "Content-Type: text/plain; charset=utf-8\r\n\r\nbody of message %d\r\n", n)
	for k := range attachments {
		fmt.Fprintf(b, "--GENBOUNDARY\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"file%d.bin\"\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n",
			k, encode64([]byte(fmt.Sprintf("attachment %d of message %d", k, n))))
	}
	b.WriteString("--GENBOUNDARY--\r\n")
}
