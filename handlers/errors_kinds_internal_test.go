package handlers

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/identity"
)

// TestEveryKindHasAStatus fails when a kind is added to domain/fault without its status
// here, and checks each kind's status and code, bare and wrapped.
func TestEveryKindHasAStatus(t *testing.T) {
	t.Parallel()
	want := map[fault.Kind]struct {
		status int
		code   string
	}{
		fault.Other:           {500, "internal"},
		fault.Invalid:         {400, "validation_failed"},
		fault.Unauthenticated: {401, "unauthenticated"},
		fault.Forbidden:       {403, "forbidden"},
		fault.NotFound:        {404, "not_found"},
		fault.Conflict:        {409, "conflict"},
		fault.Gone:            {410, "gone"},
		fault.TooLarge:        {413, "payload_too_large"},
		fault.Timeout:         {408, "request_timeout"},
		fault.RateLimited:     {429, "too_many_requests"},
		fault.Unavailable:     {503, "unavailable"},
		fault.Integrity:       {500, "integrity_error"},
	}
	for _, k := range fault.Kinds() {
		status, ok := kindStatus[k]
		assert.True(t, ok, "kind %q has no status", k)
		_, ok = kindCodes[k]
		assert.True(t, ok, "kind %q has no code", k)
		w, ok := want[k]
		if !assert.True(t, ok, "kind %q is not in this test", k) {
			continue
		}
		assert.Equal(t, w.status, status, "kind %q: got %d; want %d", k, status, w.status)
		for _, err := range []error{k, fmt.Errorf("op: %w", k), fault.New(k, "some "+k.Error())} {
			e := classify(err)
			assert.Equal(t, w.status, e.status, "%v: got %d; want %d", err, e.status, w.status)
			assert.Equal(t, w.code, e.Code, "%v", err)
		}
	}
	assert.Len(t, kindStatus, len(fault.Kinds()), "a status for a kind that does not exist")
}

// TestSentinelsAreOfTheirKind checks the kind, and so the status, of every sentinel the
// contract maps.
func TestSentinelsAreOfTheirKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		kind fault.Kind
	}{
		{domain.ErrValidation, fault.Invalid},
		{&domain.ValidationError{}, fault.Invalid},
		{&ValidationError{}, fault.Invalid},
		{ErrInvalidJSON, fault.Invalid},
		{ErrUnauthenticated, fault.Unauthenticated},
		{identity.ErrBadCredentials, fault.Unauthenticated},
		{ErrForbidden, fault.Forbidden},
		{erasure.ErrDistinctApprover, fault.Forbidden},
		{eventstore.ErrNotFound, fault.NotFound},
		{app.ErrNotFound, fault.NotFound},
		{archive.ErrNotFound, fault.NotFound},
		{errNoRoute, fault.NotFound},
		{ErrRequestTimeout, fault.Timeout},
		{domain.ErrInvalidTransition, fault.Conflict},
		{&domain.TransitionError{}, fault.Conflict},
		{eventstore.ErrConcurrentModification, fault.Conflict},
		{app.ErrCertificateNotAvailable, fault.Conflict},
		{export.ErrBatesConflict, fault.Conflict},
		{export.ErrNotReady, fault.Conflict},
		{app.ErrProductionMissing, fault.Gone},
		{ErrPayloadTooLarge, fault.TooLarge},
		{&http.MaxBytesError{Limit: MaxBodyBytes}, fault.TooLarge},
		{ErrTooManyRequests, fault.RateLimited},
		{archive.ErrIntegrity, fault.Integrity},
		{archive.ErrUnknownKey, fault.Integrity},
		{ErrArchiveUnavailable, fault.Unavailable},
		{ErrExportsUnavailable, fault.Unavailable},
		{ErrDatabaseUnavailable, fault.Unavailable},
		{app.ErrBusy, fault.Unavailable},
		{render.ErrPDFUnavailable, fault.Unavailable},
		{render.ErrPDFNotConfigured, fault.Unavailable},
		{errors.New("boom"), fault.Other},
	}
	for _, tc := range cases {
		got := kindOf(fmt.Errorf("op: %w", tc.err))
		assert.Equal(t, tc.kind, got, "%v: got %q; want %q", tc.err, got, tc.kind)
	}
}

// TestWrappedErrorKeepsKindAndCause: an error wrapped as "%w: %w" answers by its kind and
// still holds its cause, for the log and for errors.Is.
func TestWrappedErrorKeepsKindAndCause(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		code string
	}{
		{fmt.Errorf("%w: decompress: %w", archive.ErrIntegrity, fs.ErrNotExist), "integrity_error"},
		{fmt.Errorf("%w: %w", app.ErrCertificateNotAvailable, fs.ErrNotExist), "certificate_not_available"},
		{fmt.Errorf("%w: reading the answer: %w", render.ErrPDFUnavailable, fs.ErrNotExist), "pdf_service_unavailable"},
		{fmt.Errorf("%w: export x: %w", app.ErrProductionMissing, fs.ErrNotExist), "export_files_missing"},
	}
	for _, tc := range cases {
		assert.ErrorIs(t, tc.err, fs.ErrNotExist, "%v: the cause is lost", tc.err)
		assert.NotEqual(t, fault.Other, fault.KindOf(tc.err), "%v: the kind is lost", tc.err)
		assert.Equal(t, tc.code, classify(tc.err).Code, "%v", tc.err)
	}
	// The outer kind decides: a certificate not available because its request is missing.
	e := classify(fmt.Errorf("%w: %w", app.ErrCertificateNotAvailable, app.ErrNotFound))
	assert.Equal(t, "certificate_not_available", e.Code)
	// A PDF service that does not answer is the PDF's 503, not the database's.
	e = classify(fmt.Errorf("%w: %w", render.ErrPDFUnavailable, ErrDatabaseUnavailable))
	assert.Equal(t, "pdf_service_unavailable", e.Code)
}
