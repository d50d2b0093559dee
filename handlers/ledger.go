package handlers

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/eventstore"
)

// The ledger routes let anyone holding the public key check the ledger: every hash in
// their JSON answers is lower-case hex (proof hashes included), and checkpoints are the
// signed notes as text, to be checked with the public key (golang.org/x/mod/sumdb/note).

func (s *Server) ledgerRoutes(api *mux.Router) {
	api.Handle("/ledger/public-key", withQuery(onlyGET(s.publicKey)))
	api.Handle("/ledger/checkpoint", withQuery(onlyGET(s.checkpoint)))
	api.Handle("/ledger/proof", withQuery(onlyGET(s.inclusionProof), "position", "size"))
	api.Handle("/ledger/consistency", withQuery(onlyGET(s.consistencyProof), "from", "to"))
	api.Handle("/ledger/events", withQuery(onlyGET(s.ledgerEvents), "stream", "type", "from", "limit", "tenant"))
}

// publicKey answers the checkpoint verifier key, "<name>+<hash>+<base64>", as text.
func (s *Server) publicKey(w http.ResponseWriter, _ *http.Request) {
	writeText(w, []byte(s.app.Load().Ledger.PublicKey()+"\n"))
}

// checkpoint answers a signed checkpoint of the current head as text, signing one on
// demand when the newest is older than the head.
func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request) {
	cp, err := s.app.Load().Ledger.Checkpoint(r.Context())
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeText(w, cp.Note)
}

// inclusionProofJSON is the answer of GET /api/v1/ledger/proof. It verifies with
// proof.VerifyInclusion(rfc6962.DefaultHasher, leaf_index, tree_size, leaf_hash, hashes,
// root_hash) of github.com/transparency-dev/merkle.
type inclusionProofJSON struct {
	Position   int64    `json:"position"`
	LeafIndex  int64    `json:"leaf_index"`
	TreeSize   int64    `json:"tree_size"`
	LeafHash   string   `json:"leaf_hash"`
	Hashes     []string `json:"hashes"`
	RootHash   string   `json:"root_hash"`
	Checkpoint *string  `json:"checkpoint"` // the signed note of tree_size, null if none
}

// inclusionProof answers GET /api/v1/ledger/proof?position=P&size=N. size defaults to
// the newest checkpoint's (one of the head is signed when that does not include P).
func (s *Server) inclusionProof(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var ve ValidationError
	position := queryInt(q, "position", true, 1, &ve)
	size := queryInt(q, "size", false, 1, &ve)
	if ve.Fields["position"] == "" && size > 0 && position > size {
		ve.add("position", "must not be greater than size")
	}
	if err := ve.err(); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	p, err := s.app.Load().Ledger.InclusionProof(r.Context(), position, size)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, inclusionProofJSON{
		Position: p.Position, LeafIndex: p.LeafIndex, TreeSize: p.TreeSize,
		LeafHash: p.LeafHash.String(), Hashes: hexAll(p.Hashes), RootHash: p.RootHash.String(),
		Checkpoint: noteOf(p.Checkpoint),
	})
}

// consistencyProofJSON is the answer of GET /api/v1/ledger/consistency. It verifies with
// proof.VerifyConsistency(rfc6962.DefaultHasher, from, to, hashes, from_root, to_root).
type consistencyProofJSON struct {
	From           int64    `json:"from"`
	To             int64    `json:"to"`
	Hashes         []string `json:"hashes"`
	FromRoot       string   `json:"from_root"`
	ToRoot         string   `json:"to_root"`
	FromCheckpoint *string  `json:"from_checkpoint"` // signed note of size from, null if none
	ToCheckpoint   *string  `json:"to_checkpoint"`   // signed note of size to, null if none
}

// consistencyProof answers GET /api/v1/ledger/consistency?from=A&to=B.
func (s *Server) consistencyProof(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var ve ValidationError
	from := queryInt(q, "from", true, 0, &ve)
	to := queryInt(q, "to", true, 0, &ve)
	if ve.err() == nil && from > to {
		ve.add("from", "must not be greater than to")
	}
	if err := ve.err(); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	p, err := s.app.Load().Ledger.ConsistencyProof(r.Context(), from, to)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, consistencyProofJSON{
		From: p.From, To: p.To, Hashes: hexAll(p.Hashes),
		FromRoot: p.FromRoot.String(), ToRoot: p.ToRoot.String(),
		FromCheckpoint: noteOf(p.FromCheckpoint), ToCheckpoint: noteOf(p.ToCheckpoint),
	})
}

// queryInt reads the integer query value name, at least min. A missing optional value
// is 0; problems are added to ve.
func queryInt(q url.Values, name string, required bool, min int64, ve *ValidationError) int64 {
	raw, present := q[name]
	if !present || len(raw) == 0 || raw[0] == "" {
		if required {
			ve.add(name, "is required")
		}
		return 0
	}
	if len(raw) > 1 {
		ve.add(name, "must be given once")
		return 0
	}
	n, err := strconv.ParseInt(raw[0], 10, 64)
	if err != nil {
		ve.add(name, "must be an integer")
		return 0
	}
	if n < min {
		ve.add(name, "must be at least "+strconv.FormatInt(min, 10))
		return 0
	}
	return n
}

// hexAll encodes hashes as hex, [] when there are none.
func hexAll(hashes [][]byte) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

// noteOf returns the checkpoint's signed note, nil for no checkpoint.
func noteOf(cp *eventstore.Checkpoint) *string {
	if cp == nil {
		return nil
	}
	n := string(cp.Note)
	return &n
}
