package certificate

import (
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// NewBody lets the tests build a body from a request state written by hand, to pin the
// body's fields and hash; the package itself builds bodies only in BodyFromEvents.
var NewBody = newBody

// CertificateHash is NewBody(req, completion).Hash(), for the tests.
func CertificateHash(req *erasure.Request, completion *eventstore.Record) string {
	h, err := newBody(req, completion).Hash()
	if err != nil {
		panic(err)
	}
	return h
}
