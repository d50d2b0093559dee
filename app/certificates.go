package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/certificate"
	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/eventstore"
)

// ErrCertificateNotAvailable means a request has no certificate yet because it is not
// completed (HTTP 409 certificate_not_available).
var ErrCertificateNotAvailable = fault.New(fault.Conflict, "certificate not available")

// Certificates issues the erasure certificates of completed requests: the printable HTML
// page, its PDF (through the PDF service), and the bundle that a regulator verifies
// offline. Everything is rebuilt from the request's ledger events, so the certificate
// hash always equals the stored certificate_hash.
type Certificates struct {
	store  *eventstore.Store
	signer *eventstore.Signer
	pdf    *render.PDFClient
}

// NewCertificates returns the certificate use cases; it rejects nil dependencies and an
// invalid configuration. signer gives the ledger's public key and signs a checkpoint when
// a bundle needs one.
func NewCertificates(store *eventstore.Store, signer *eventstore.Signer, cfg CertificatesConfig) (*Certificates, error) {
	if store == nil || signer == nil {
		return nil, errors.New("app: certificates need a store and a signer")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	c := &Certificates{store: store, signer: signer}
	if cfg.PDFServiceURL != "" {
		c.pdf = &render.PDFClient{URL: cfg.PDFServiceURL}
	}
	return c, nil
}

// Body returns the certificate body of a request of tenant (AllTenants for an
// administrator): ErrNotFound when the request does not exist there,
// ErrCertificateNotAvailable unless it is completed.
func (c *Certificates) Body(ctx context.Context, tenant, requestID string) (certificate.Body, error) {
	_, body, err := c.completed(ctx, tenant, requestID)
	return body, err
}

// HTML returns the printable HTML certificate of a completed request of tenant; errors as
// Body.
func (c *Certificates) HTML(ctx context.Context, tenant, requestID string) ([]byte, error) {
	body, err := c.Body(ctx, tenant, requestID)
	if err != nil {
		return nil, err
	}
	view, err := render.NewView(body, c.signer.Key().PublicKey)
	if err != nil {
		return nil, err
	}
	return render.HTML(view)
}

// PDF returns the HTML certificate converted to PDF by the PDF service; errors as Body,
// and render.ErrPDFUnavailable when the service is not set, down or failing.
func (c *Certificates) PDF(ctx context.Context, tenant, requestID string) ([]byte, error) {
	page, err := c.HTML(ctx, tenant, requestID)
	if err != nil {
		return nil, err
	}
	return c.pdf.Convert(ctx, page)
}

// Bundle returns the verification bundle of a completed request of tenant (errors as
// Body): the certificate body and hash, every event of the request's stream as stored,
// each with its inclusion proof against one signed checkpoint that covers the
// completion, and the completion's chain link. The checkpoint is the smallest stored one
// covering the completion, so the same request gives the same bundle; when none covers
// it yet, one is signed now.
func (c *Certificates) Bundle(ctx context.Context, tenant, requestID string) (*certificate.Bundle, error) {
	recs, _, err := c.completed(ctx, tenant, requestID)
	if err != nil {
		return nil, err
	}
	completion := recs[len(recs)-1].Position
	in := certificate.BundleInput{Events: recs}
	if in.Checkpoint, err = c.checkpointCovering(ctx, completion); err != nil {
		return nil, err
	}
	for _, rec := range recs {
		hashes, err := c.store.InclusionProof(ctx, rec.Position, in.Checkpoint.Size)
		if err != nil {
			return nil, err
		}
		in.Proofs = append(in.Proofs, hashes)
	}
	if in.PreviousChainHash, err = c.chainHashAt(ctx, completion-1); err != nil {
		return nil, err
	}
	return certificate.NewBundle(in)
}

// completed loads a request's events and rebuilds its certificate body.
func (c *Certificates) completed(ctx context.Context, tenant, requestID string) ([]eventstore.Record, certificate.Body, error) {
	recs, err := c.store.Load(ctx, erasure.StreamID(requestID))
	if err != nil {
		return nil, certificate.Body{}, err
	}
	if len(recs) == 0 || (tenant != AllTenants && recs[0].TenantID != tenant) {
		return nil, certificate.Body{}, fmt.Errorf("%w: erasure request %s", ErrNotFound, requestID)
	}
	body, err := certificate.BodyFromEvents(recs)
	if errors.Is(err, certificate.ErrNotCompleted) {
		return nil, certificate.Body{}, fmt.Errorf("%w: %w", ErrCertificateNotAvailable, err)
	}
	if err != nil {
		return nil, certificate.Body{}, fmt.Errorf("erasure request %s: %w", requestID, err)
	}
	return recs, body, nil
}

// checkpointCovering returns the smallest stored checkpoint whose tree includes position,
// signing one of the head when there is none.
func (c *Certificates) checkpointCovering(ctx context.Context, position int64) (*eventstore.Checkpoint, error) {
	cp, err := c.store.CheckpointCovering(ctx, position)
	if errors.Is(err, eventstore.ErrNotFound) {
		cp, err = c.signer.Sign(ctx)
	}
	if err != nil {
		return nil, err
	}
	if cp.Size < position {
		return nil, fmt.Errorf("checkpoint of size %d does not cover position %d", cp.Size, position)
	}
	return cp, nil
}

// chainHashAt returns the chain hash of the event at position, 32 zero bytes at 0.
func (c *Certificates) chainHashAt(ctx context.Context, position int64) (eventstore.Hash, error) {
	if position == 0 {
		return eventstore.Hash{}, nil
	}
	recs, err := c.store.ReadPositions(ctx, []int64{position})
	if err != nil {
		return eventstore.Hash{}, err
	}
	if len(recs) != 1 {
		return eventstore.Hash{}, fmt.Errorf("%w: event at position %d", eventstore.ErrNotFound, position)
	}
	return recs[0].ChainHash, nil
}
