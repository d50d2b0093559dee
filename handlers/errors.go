package handlers

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/eventstore"
	"github.com/mailledger/mailledger/identity"
)

// This file is the one place that maps errors to the HTTP status and error code of
// docs/api.md.

// Sentinel errors of the HTTP layer.
var (
	// ErrInvalidJSON means a request body is not the JSON the call expects.
	ErrInvalidJSON = errors.New("invalid json")
	// ErrUnauthenticated means no or wrong credentials.
	ErrUnauthenticated = errors.New("authentication required")
	// ErrForbidden means the caller may not do this.
	ErrForbidden = errors.New("forbidden")
	// ErrRequestTimeout means the client did not send its request body within
	// HTTPConfig.BodyTimeout.
	ErrRequestTimeout = errors.New("request body timeout")
	// ErrPayloadTooLarge means a request body is over MaxBodyBytes.
	ErrPayloadTooLarge = errors.New("request body is too large")
	// ErrDatabaseUnavailable means the database does not answer; nothing was changed.
	ErrDatabaseUnavailable = errors.New("database unavailable")
	// ErrInvalidTransition means the object's state does not allow the action.
	ErrInvalidTransition = errors.New("invalid transition")
	// ErrTooManyRequests means too many failed logins from one client IP for one user
	// name within a minute.
	ErrTooManyRequests = errors.New("too many failed logins")
	// ErrArchiveUnavailable means the application runs without the email archive.
	ErrArchiveUnavailable = errors.New("the archive is not available")
	// ErrExportsUnavailable means the application runs without the eDiscovery exports.
	ErrExportsUnavailable = errors.New("the eDiscovery exports are not available")
)

// busyRetryAfterSeconds is the Retry-After of a 503 busy.
const busyRetryAfterSeconds = "5"

// retryAfterSeconds is the Retry-After of a 429: the failed-login window.
const retryAfterSeconds = "60"

// errNoRoute answers paths that no route serves.
var errNoRoute = fmt.Errorf("%w: no such path", eventstore.ErrNotFound)

// ValidationError names the query or body fields that are wrong, field → reason.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + ": " + e.Fields[name]
	}
	return "validation failed: " + strings.Join(parts, "; ")
}

// add records a problem with field, keeping the first one.
func (e *ValidationError) add(field, reason string) {
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	if _, seen := e.Fields[field]; !seen {
		e.Fields[field] = reason
	}
}

// err returns e when it holds a problem, nil otherwise.
func (e *ValidationError) err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// apiError is the error object of docs/api.md.
type apiError struct {
	status  int
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// classify maps err to its status, code and client-facing message. Unknown errors are
// 500 internal with a generic message: their text may reveal internals.
func classify(err error) apiError {
	if e, ok := classifyClientError(err); ok {
		return e
	}
	switch {
	case errors.Is(err, archive.ErrIntegrity), errors.Is(err, archive.ErrUnknownKey):
		return apiError{status: http.StatusInternalServerError, Code: "integrity_error",
			Message: "the stored message failed its integrity check; it is not served"}
	case errors.Is(err, ErrArchiveUnavailable):
		return apiError{status: http.StatusServiceUnavailable, Code: "archive_unavailable", Message: err.Error()}
	case errors.Is(err, app.ErrBusy):
		return apiError{status: http.StatusServiceUnavailable, Code: "busy",
			Message: "the server's memory for message reads is in use by other reads and exports; retry in a few seconds"}
	case errors.Is(err, ErrExportsUnavailable):
		return apiError{status: http.StatusServiceUnavailable, Code: "exports_unavailable", Message: err.Error()}
	case errors.Is(err, render.ErrPDFUnavailable):
		return apiError{status: http.StatusServiceUnavailable, Code: "pdf_service_unavailable",
			Message: "the PDF service is not available; the HTML certificate is"}
	case isDatabaseDown(err):
		return apiError{status: http.StatusServiceUnavailable, Code: "database_unavailable", Message: "the database does not answer; nothing was changed"}
	}
	return apiError{status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

// classifyClientError maps the errors that are the caller's doing (4xx).
func classifyClientError(err error) (apiError, bool) {
	if e, ok := classifyInput(err); ok {
		return e, true
	}
	if e, ok := classifyExport(err); ok {
		return e, true
	}
	var te *domain.TransitionError
	switch {
	case errors.Is(err, ErrUnauthenticated), errors.Is(err, identity.ErrBadCredentials):
		return apiError{status: http.StatusUnauthorized, Code: "unauthenticated", Message: "authentication required"}, true
	case errors.Is(err, ErrTooManyRequests):
		return apiError{status: http.StatusTooManyRequests, Code: "too_many_requests",
			Message: "too many failed logins; try again in a minute"}, true
	case errors.Is(err, ErrForbidden):
		return apiError{status: http.StatusForbidden, Code: "forbidden", Message: "not allowed"}, true
	case errors.Is(err, erasure.ErrDistinctApprover):
		return apiError{status: http.StatusForbidden, Code: "distinct_approver_required",
			Message: "the creator of an erasure request may not approve it (GDPR_DISTINCT_APPROVER)"}, true
	case errors.Is(err, app.ErrCertificateNotAvailable):
		return apiError{status: http.StatusConflict, Code: "certificate_not_available", Message: err.Error()}, true
	case errors.Is(err, eventstore.ErrNotFound), errors.Is(err, app.ErrNotFound), errors.Is(err, archive.ErrNotFound):
		return apiError{status: http.StatusNotFound, Code: "not_found", Message: err.Error()}, true
	case errors.As(err, &te):
		return apiError{status: http.StatusConflict, Code: "invalid_transition", Message: te.Error(),
			Details: map[string]any{"status": te.State, "action": te.Action}}, true
	case errors.Is(err, ErrInvalidTransition), errors.Is(err, domain.ErrInvalidTransition):
		return apiError{status: http.StatusConflict, Code: "invalid_transition", Message: err.Error()}, true
	case errors.Is(err, eventstore.ErrConcurrentModification):
		return apiError{status: http.StatusConflict, Code: "conflict", Message: "the object was changed concurrently; reload and retry"}, true
	}
	return apiError{}, false
}

// classifyInput maps the errors of a bad request body or query (400, 413).
func classifyInput(err error) (apiError, bool) {
	var ve *ValidationError
	var dve *domain.ValidationError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &ve):
		return apiError{status: http.StatusBadRequest, Code: "validation_failed", Message: err.Error(),
			Details: map[string]any{"fields": ve.Fields}}, true
	case errors.As(err, &dve), errors.Is(err, domain.ErrValidation):
		fields := map[string]string{}
		if dve != nil && dve.Fields != nil {
			fields = dve.Fields
		}
		return apiError{status: http.StatusBadRequest, Code: "validation_failed", Message: (&ValidationError{Fields: fields}).Error(),
			Details: map[string]any{"fields": fields}}, true
	case errors.As(err, &tooBig), errors.Is(err, ErrPayloadTooLarge):
		return apiError{status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Message: "request body is over 1 MiB"}, true
	case errors.Is(err, ErrInvalidJSON):
		return apiError{status: http.StatusBadRequest, Code: "invalid_json", Message: err.Error()}, true
	case errors.Is(err, ErrRequestTimeout):
		return apiError{status: http.StatusRequestTimeout, Code: "request_timeout",
			Message: "the request body did not arrive within the time allowed (HTTP_BODY_TIMEOUT)"}, true
	}
	return apiError{}, false
}

// classifyExport maps the eDiscovery errors (docs/api.md).
func classifyExport(err error) (apiError, bool) {
	switch {
	case errors.Is(err, export.ErrBatesConflict):
		return apiError{status: http.StatusConflict, Code: "bates_range_conflict",
			Message: "bates_start_number overlaps Bates numbers already issued for this prefix; use 0 to continue after them"}, true
	case errors.Is(err, export.ErrNotReady):
		return apiError{status: http.StatusConflict, Code: "export_not_ready", Message: err.Error()}, true
	case errors.Is(err, app.ErrProductionMissing):
		return apiError{status: http.StatusGone, Code: "export_files_missing",
			Message: "the export is completed but its files are no longer in DIR_EXPORT"}, true
	}
	return apiError{}, false
}

// isDatabaseDown recognises the errors of a database that cannot be reached.
func isDatabaseDown(err error) bool {
	var netErr net.Error
	return errors.Is(err, ErrDatabaseUnavailable) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &netErr)
}

// writeError answers with err's status and the error body of docs/api.md. Server-side
// failures are logged with the request; client errors are not, nor is an unset
// PDFSERVICE_URL (serve warns about it once at start).
func writeError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := classify(err)
	if logger == nil {
		logger = slog.Default()
	}
	if e.status >= 500 && !errors.Is(r.Context().Err(), context.Canceled) && !errors.Is(err, render.ErrPDFNotConfigured) {
		logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path,
			"status", e.status, "code", e.Code, "request_id", requestID(r.Context()), "error", err.Error())
	}
	switch e.status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Basic realm="mailledger"`)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", retryAfterSeconds)
	case http.StatusRequestTimeout:
		w.Header().Set("Connection", "close")
	case http.StatusServiceUnavailable:
		if e.Code == "busy" {
			w.Header().Set("Retry-After", busyRetryAfterSeconds)
		}
	}
	writeJSON(w, e.status, map[string]apiError{"error": e})
}
