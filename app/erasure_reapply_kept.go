package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/eventstore"
)

// KeptCertificates is where Reapply finds the certificate bundles that a CertificateKeeper
// kept outside the database, and the key they must verify with.
type KeptCertificates struct {
	// Dir is the folder of the bundles; empty: Reapply reads only the database's ledger.
	Dir string
	// PublicKey is the ledger's verifier key (signed-note form); required with Dir. A
	// bundle that does not verify with it is refused, never applied.
	PublicKey string
	// Origin is the ledger's origin; empty means the key's name.
	Origin string
}

// Validate reports a folder without a key.
func (k KeptCertificates) Validate() error {
	if k.Dir != "" && k.PublicKey == "" {
		return fmt.Errorf("%w: kept certificates in %s need the ledger's public key", ErrConfig, k.Dir)
	}
	return nil
}

// RefusedCertificate is a kept bundle that Reapply did not apply, and why.
type RefusedCertificate struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// keptErasure is a completed erasure proven by a kept bundle.
type keptErasure struct {
	view    RequestView
	deleted int
}

// keptErasures reads the kept bundles of the requests that known (the completed requests
// of the database) lacks: each verified with the ledger's key and named after its
// request. Those that do not verify are refused, with the reason.
func (e *Erasure) keptErasures(known map[string]bool) ([]keptErasure, []RefusedCertificate, error) {
	k := e.cfg.Kept
	if k.Dir == "" {
		return nil, nil, nil
	}
	names, err := filepath.Glob(filepath.Join(k.Dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(names)
	var kept []keptErasure
	var refused []RefusedCertificate
	for _, path := range names {
		requestID := strings.TrimSuffix(filepath.Base(path), ".json")
		if known[requestID] {
			continue
		}
		ke, err := readKept(path, requestID, k)
		if err != nil {
			refused = append(refused, RefusedCertificate{File: filepath.Base(path), Reason: err.Error()})
			e.cfg.Logger.Warn("kept erasure certificate refused: not applied", "file", path, "reason", err.Error())
			continue
		}
		kept = append(kept, ke)
	}
	return kept, refused, nil
}

// maxKeptBundle bounds the file Reapply reads as a kept bundle: a real one is a few
// kilobytes (a request's events and their proofs).
const maxKeptBundle = 16 << 20

// readKept verifies the bundle at path and returns the erasure it proves.
func readKept(path, requestID string, k KeptCertificates) (keptErasure, error) {
	info, err := os.Stat(path)
	if err != nil {
		return keptErasure{}, err
	}
	if info.Size() > maxKeptBundle {
		return keptErasure{}, fmt.Errorf("%d bytes: too large for a certificate bundle (at most %d)", info.Size(), maxKeptBundle)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return keptErasure{}, err
	}
	res, err := certificate.VerifyBundleOrigin(data, k.PublicKey, k.Origin)
	if err != nil {
		return keptErasure{}, err
	}
	body := res.Body
	if body.RequestID != requestID {
		return keptErasure{}, fmt.Errorf("the bundle is the certificate of %s, not of %s", body.RequestID, requestID)
	}
	completed, err := time.Parse(eventstore.TimeFormat, body.CompletedAt)
	if err != nil {
		return keptErasure{}, fmt.Errorf("completed_at %q: %w", body.CompletedAt, err)
	}
	return keptErasure{deleted: body.DeletedCount, view: RequestView{RequestID: body.RequestID, TenantID: body.TenantID,
		EmailAddresses: body.EmailAddresses, ExecutedAt: &completed}}, nil
}

// keptLooksOlder reports whether a kept bundle proves an erasure that deleted messages
// and that the database neither knows as completed nor shows in the archive (no message
// marked with its id): the database was restored from a backup made before it.
func (e *Erasure) keptLooksOlder(ctx context.Context, known map[string]bool) (bool, error) {
	kept, _, err := e.keptErasures(known)
	if err != nil {
		return false, err
	}
	for _, ke := range kept {
		if ke.deleted == 0 {
			continue
		}
		n, err := e.arc.ErasedCount(ctx, ke.view.TenantID, ke.view.RequestID)
		if err != nil {
			return false, err
		}
		if n == 0 {
			return true, nil
		}
	}
	return false, nil
}

// completedIDs is the set of the request ids of done.
func completedIDs(done []RequestView) map[string]bool {
	ids := make(map[string]bool, len(done))
	for _, v := range done {
		ids[v.RequestID] = true
	}
	return ids
}
