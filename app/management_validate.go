package app

import (
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/idna"

	"github.com/mailledger/mailledger/domain"
)

// domainName returns s as a lower-cased ASCII domain name (IDNA), or false.
func domainName(s string) (string, bool) {
	s = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	if s == "" || len(s) > 253 || !strings.Contains(s, ".") && s != "local" {
		return "", false
	}
	a, err := idna.Lookup.ToASCII(s)
	if err != nil {
		return "", false
	}
	return a, true
}

// address returns s trimmed and lower-cased when it is an RFC 5322 addr-spec.
func address(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	return s, domain.ValidAddress(s)
}

var colourRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// webURL reports an http or https URL with a host; bare reports a host alone is fine too.
func webURL(s string, bare bool) bool {
	if bare && !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(s) <= 512
}

// optText validates an optional text field: nil is unset, "" clears it.
func optText(v *domain.ValidationError, i int, field string, s *string, ok func(string) bool, reason string) {
	if s == nil || *s == "" {
		return
	}
	if !ok(*s) {
		v.Add(fieldOf(i, field), reason)
	}
}

// strOrNil is the value of a nullable column: nil for NULL or "".
func strOrNil(s *string) any {
	if s == nil || *s == "" {
		return nil
	}
	return *s
}
