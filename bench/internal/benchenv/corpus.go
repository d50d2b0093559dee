package benchenv

import (
	"bytes"
	"strconv"
)

// DistinctCopy returns raw with the header line "X-Bench-Copy: n" in front of its header
// (after the mbox "From " line a file may start with), ended like the header's first
// line, so that copy n of a corpus file is a distinct message with the same content.
func DistinctCopy(raw []byte, n int) []byte {
	at := 0
	if bytes.HasPrefix(raw, []byte("From ")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			at = i + 1
		}
	}
	eol := "\n"
	if i := bytes.IndexByte(raw[at:], '\n'); i > 0 && raw[at+i-1] == '\r' {
		eol = "\r\n"
	}
	line := "X-Bench-Copy: " + strconv.Itoa(n) + eol
	out := make([]byte, 0, len(raw)+len(line))
	out = append(out, raw[:at]...)
	out = append(out, line...)
	return append(out, raw[at:]...)
}
