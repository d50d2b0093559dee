package console

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The ledger page: the current signed checkpoint and the public key, for every role (as
// GET /api/v1/ledger/checkpoint and /public-key), and, for those app.Scope.ComplianceTenant
// admits (global administrators and auditors), the verification of the whole ledger:
// its last result, and a button that starts one in the background (app.LedgerVerification).

const ledgerPath = "/ledger"

func (s *Server) ledgerRoutes(r *mux.Router) {
	r.Handle(ledgerPath, methods{get: s.withSession(s.ledgerPage)})
	r.Handle(ledgerPath+"/verify", methods{post: s.withCompliance(s.verifyLedger)})
}

// ledgerView is what the ledger page shows.
type ledgerView struct {
	Size        int64
	RootHash    string
	Time        string
	Signature   string
	Note        string
	PublicKey   string
	Fingerprint string
	MayVerify   bool
	Running     *app.VerificationRun
	Last        *app.VerificationRun
}

// RefreshSeconds reloads the page every two seconds while a verification runs.
func (v ledgerView) RefreshSeconds() int {
	if v.Running != nil {
		return 2
	}
	return 0
}

// ledgerPage shows the checkpoint (one of the head is signed when the newest is older),
// the key and, for those who may verify, the verification; it refreshes itself every two
// seconds while a verification runs.
func (s *Server) ledgerPage(w http.ResponseWriter, r *http.Request, c *call) {
	cp, err := c.app.Ledger.Checkpoint(r.Context())
	if err != nil {
		s.fail(w, r, c, err)
		return
	}
	note := string(cp.Note)
	v := ledgerView{Size: cp.Size, RootHash: cp.RootHash.String(), Time: cp.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		Signature: signatureLine(note), Note: note, PublicKey: c.app.Ledger.PublicKey(), Fingerprint: c.app.Ledger.KeyFingerprint()}
	if _, err := c.scope.ComplianceTenant(); err == nil {
		v.MayVerify = true
		v.Running, v.Last = c.app.Verification.Status()
	}
	s.render(w, r, c, http.StatusOK, "ledger", "Ledger", v)
}

// signatureLine is the signature line of a signed note ("— name base64").
func signatureLine(note string) string {
	for _, line := range strings.Split(note, "\n") {
		if strings.HasPrefix(line, "— ") {
			return line
		}
	}
	return ""
}

// verifyLedger starts a verification (or leaves the running one) and shows the page.
func (s *Server) verifyLedger(w http.ResponseWriter, r *http.Request, c *call, _ string) {
	c.app.Verification.Start(c.sess.principal.Username)
	http.Redirect(w, r, ledgerPath, http.StatusSeeOther)
}
