package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/legalhold"
)

// The address rule (docs/address-rule.md) is the analyzer's, and the domain imports only
// the standard library: so the use cases turn the addresses a request gives into their
// keys here (analyzer.Normalize, analyzer.NormalizeDomain), with the reason for each one
// refused, and the domain checks and stores the keys.

// requestKeys returns the key of each address of an erasure request, in order. When the
// rule refuses some, the error is a domain.ValidationError that names each (up to
// erasure.MaxAddresses of them) by its position, with the reason, as the domain does.
// An empty list is left to the domain.
func requestKeys(addrs []string) ([]string, error) {
	var v domain.ValidationError
	keys := make([]string, 0, len(addrs))
	bad := 0
	for i, addr := range addrs {
		key, err := analyzer.Normalize(addr)
		if err != nil {
			if bad++; bad <= erasure.MaxAddresses {
				v.Add(fmt.Sprintf("email_addresses[%d]", i), "not an email address: "+clipInput(addr)+" ("+reason(err)+")")
			}
			continue
		}
		keys = append(keys, key)
	}
	if bad > 0 {
		v.Add("email_addresses", fmt.Sprintf("%d of the addresses are not email addresses (RFC 5322 addr-spec)", bad))
		return nil, v.Err()
	}
	return keys, nil
}

// holdKey returns the key of a hold's value: an address's (analyzer.Normalize) or a
// domain's (analyzer.NormalizeDomain, a leading "@" allowed). Another type's value is
// left to the domain, which refuses the type.
func holdKey(typ, value string) (string, error) {
	var key string
	var err error
	switch strings.TrimSpace(typ) {
	case legalhold.TypeAddress:
		key, err = analyzer.Normalize(value)
	case legalhold.TypeDomain:
		key, err = analyzer.NormalizeDomain(value)
	default:
		return value, nil
	}
	if err != nil {
		var v domain.ValidationError
		v.Add("value", "not an "+typ+" by the address rule: "+reason(err))
		return "", v.Err()
	}
	return key, nil
}

// reason is the analyzer's reason for refusing an address.
func reason(err error) string {
	if ae, ok := errors.AsType[*analyzer.AddressError](err); ok {
		return ae.Reason
	}
	return err.Error()
}

// clipInput shortens an address quoted back in an error to 320 bytes.
func clipInput(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= 320 {
		return s
	}
	return strings.ToValidUTF8(s[:320], "") + "…"
}
