package archivetest

import (
	"fmt"
	"strings"
)

// The hostile messages below are MIME bombs and header floods for the parser's bounds.

// DeepMessage nests depth multiparts, each holding a text part with "level N" before its
// nested child, so that the text of every level read is there to find.
func DeepMessage(depth int) []byte {
	var b strings.Builder
	b.WriteString("From: a@x.test\r\nTo: b@y.test\r\nSubject: deep\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n")
	for i := 0; i < depth; i++ {
		fmt.Fprintf(&b, "--b%d\r\nContent-Type: text/plain\r\n\r\nlevel %d\r\n--b%d\r\nContent-Type: multipart/mixed; boundary=\"b%d\"\r\n\r\n", i, i, i, i+1)
	}
	fmt.Fprintf(&b, "--b%d\r\nContent-Type: text/plain\r\n\r\nbottom\r\n--b%d--\r\n", depth, depth)
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\r\n", i)
	}
	return []byte(b.String())
}

// WideMessage has n attachments side by side, att-N.txt holding "attachment N".
func WideMessage(n int) []byte {
	var b strings.Builder
	b.WriteString("From: a@x.test\r\nTo: b@y.test\r\nSubject: wide\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"w\"\r\n\r\n")
	b.WriteString("--w\r\nContent-Type: text/plain\r\n\r\nthe body\r\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "--w\r\nContent-Type: text/plain; name=\"att-%d.txt\"\r\nContent-Disposition: attachment; filename=\"att-%d.txt\"\r\n\r\nattachment %d\r\n", i, i, i)
	}
	b.WriteString("--w--\r\n")
	return []byte(b.String())
}

// ManyRecipients has n distinct addresses in To.
func ManyRecipients(n int) []byte {
	var b strings.Builder
	b.WriteString("From: a@x.test\r\nSubject: crowd\r\nTo: ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\r\n ")
		}
		fmt.Fprintf(&b, "\"User %d\" <user%d@crowd.test>", i, i)
	}
	b.WriteString("\r\n\r\nhello crowd\r\n")
	return []byte(b.String())
}

// HugeHeader has n header fields of about 100 bytes before its body.
func HugeHeader(n int) []byte {
	var b strings.Builder
	b.WriteString("From: a@x.test\r\nTo: b@y.test\r\nSubject: huge header\r\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "X-Filler-%d: %s\r\n", i, strings.Repeat("f", 80))
	}
	b.WriteString("\r\nbody after a huge header\r\n")
	return []byte(b.String())
}
