package database

// Clip shortens s to at most n bytes without splitting a UTF-8 sequence: a value longer
// than its column (an actor, a subject, an address) is stored cut, never refused, on every
// dialect alike.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
