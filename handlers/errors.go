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
	"github.com/mailledger/mailledger/certificate/render"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/domain/fault"
	"github.com/mailledger/mailledger/eventstore"
)

// This file is the one place that maps errors to the HTTP status and error code of
// docs/api.md: the status from the error's kind (domain/fault), the code from the kind or,
// where the contract gives one error a code of its own, from that error.

// Sentinel errors of the HTTP layer, each of a kind of domain/fault.
var (
	// ErrInvalidJSON means a request body is not the JSON the call expects.
	ErrInvalidJSON = fault.New(fault.Invalid, "invalid json")
	// ErrUnauthenticated means no or wrong credentials.
	ErrUnauthenticated = fault.New(fault.Unauthenticated, "authentication required")
	// ErrForbidden means the caller may not do this.
	ErrForbidden = fault.New(fault.Forbidden, "forbidden")
	// ErrRequestTimeout means the client did not send its request body within
	// HTTPConfig.BodyTimeout.
	ErrRequestTimeout = fault.New(fault.Timeout, "request body timeout")
	// ErrPayloadTooLarge means a request body is over MaxBodyBytes.
	ErrPayloadTooLarge = fault.New(fault.TooLarge, "request body is too large")
	// ErrDatabaseUnavailable means the database does not answer; nothing was changed.
	ErrDatabaseUnavailable = fault.New(fault.Unavailable, "database unavailable")
	// ErrInvalidTransition means the object's state does not allow the action: the
	// domain's, so that the two need no separate mapping.
	ErrInvalidTransition = domain.ErrInvalidTransition
	// ErrTooManyRequests means too many failed logins from one client IP for one user
	// name within a minute.
	ErrTooManyRequests = fault.New(fault.RateLimited, "too many failed logins")
	// ErrArchiveUnavailable means the application runs without the email archive.
	ErrArchiveUnavailable = fault.New(fault.Unavailable, "the archive is not available")
	// ErrExportsUnavailable means the application runs without the eDiscovery exports.
	ErrExportsUnavailable = fault.New(fault.Unavailable, "the eDiscovery exports are not available")
)

// busyRetryAfterSeconds is the Retry-After of a 503 busy.
const busyRetryAfterSeconds = "5"

// retryAfterSeconds is the Retry-After of a 429: the failed-login window.
const retryAfterSeconds = "60"

// errNoRoute answers paths that no route serves.
var errNoRoute = fmt.Errorf("%w: no such path", fault.NotFound)

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

// Unwrap makes errors.Is(err, fault.Invalid) true.
func (e *ValidationError) Unwrap() error { return fault.Invalid }

// InvalidFields returns field → reason, for the error body (fault.FieldsError).
func (e *ValidationError) InvalidFields() map[string]string { return e.Fields }

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

// kindStatus is the HTTP status of each kind of domain/fault: the one place an error's
// status comes from. Every kind has one (TestEveryKindHasAStatus).
var kindStatus = map[fault.Kind]int{
	fault.Other:           http.StatusInternalServerError,
	fault.Invalid:         http.StatusBadRequest,
	fault.Unauthenticated: http.StatusUnauthorized,
	fault.Forbidden:       http.StatusForbidden,
	fault.NotFound:        http.StatusNotFound,
	fault.Conflict:        http.StatusConflict,
	fault.Gone:            http.StatusGone,
	fault.TooLarge:        http.StatusRequestEntityTooLarge,
	fault.Timeout:         http.StatusRequestTimeout,
	fault.RateLimited:     http.StatusTooManyRequests,
	fault.Unavailable:     http.StatusServiceUnavailable,
	fault.Integrity:       http.StatusInternalServerError,
}

// errorCode is an error code (docs/api.md) and its message; an empty message shows the
// error's own text (errors of these kinds are written for the caller).
type errorCode struct {
	code    string
	message string
}

// kindCodes is the code each kind answers with when none of its namedErrors matches.
// Other's message is generic: an unknown error's text may reveal internals; so may an
// integrity error's (the message's subject). No error answers "gone" or "unavailable"
// today: each of those kinds has named errors only; a new one gets a code of its own in
// docs/api.md and here.
var kindCodes = map[fault.Kind]errorCode{
	fault.Other:           {"internal", "internal error"},
	fault.Invalid:         {"validation_failed", ""},
	fault.Unauthenticated: {"unauthenticated", "authentication required"},
	fault.Forbidden:       {"forbidden", "not allowed"},
	fault.NotFound:        {"not_found", ""},
	fault.Conflict:        {"conflict", ""},
	fault.Gone:            {"gone", ""},
	fault.TooLarge:        {"payload_too_large", ""},
	fault.Timeout:         {"request_timeout", "the request body did not arrive within the time allowed (HTTP_BODY_TIMEOUT)"},
	fault.RateLimited:     {"too_many_requests", ""},
	fault.Unavailable:     {"unavailable", ""},
	fault.Integrity:       {"integrity_error", "the stored message failed its integrity check; it is not served"},
}

// namedError is an error that docs/api.md gives a code of its own within its kind.
type namedError struct {
	match func(error) bool
	errorCode
}

// is matches the errors that wrap target.
func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// namedErrors are the codes within a kind, tried in order before the kind's own code.
var namedErrors = map[fault.Kind][]namedError{
	fault.Invalid: {{is(ErrInvalidJSON), errorCode{"invalid_json", ""}}},
	fault.Forbidden: {
		{is(erasure.ErrDistinctApprover), errorCode{"distinct_approver_required",
			"the creator of an erasure request may not approve it (GDPR_DISTINCT_APPROVER)"}},
		{is(app.ErrRestoreTarget), errorCode{"restore_target_forbidden", "a user restores mail only to their own address"}},
	},
	fault.Gone: {{is(app.ErrProductionMissing), errorCode{"export_files_missing",
		"the export is completed but its files are no longer in DIR_EXPORT"}}},
	fault.TooLarge: {{isBodyTooLarge, errorCode{"payload_too_large", "request body is over 1 MiB"}}},
	fault.RateLimited: {{is(ErrTooManyRequests), errorCode{"too_many_requests",
		"too many failed logins; try again in a minute"}}},
	fault.Conflict: {
		{is(export.ErrBatesConflict), errorCode{"bates_range_conflict",
			"bates_start_number overlaps Bates numbers already issued for this prefix; use 0 to continue after them"}},
		{is(export.ErrNotReady), errorCode{"export_not_ready", ""}},
		{is(app.ErrCertificateNotAvailable), errorCode{"certificate_not_available", ""}},
		{is(domain.ErrInvalidTransition), errorCode{"invalid_transition", ""}},
		{is(eventstore.ErrConcurrentModification), errorCode{"conflict", "the object was changed concurrently; reload and retry"}},
	},
	fault.Unavailable: {
		{is(ErrArchiveUnavailable), errorCode{"archive_unavailable", ""}},
		{is(app.ErrBusy), errorCode{"busy",
			"the server's memory for message reads is in use by other reads and exports; retry in a few seconds"}},
		{is(ErrExportsUnavailable), errorCode{"exports_unavailable", ""}},
		{is(render.ErrPDFUnavailable), errorCode{"pdf_service_unavailable",
			"the PDF service is not available; the HTML certificate is"}},
		{isDatabaseDown, errorCode{"database_unavailable", "the database does not answer; nothing was changed"}},
		{is(app.ErrNoSmarthost), errorCode{"smarthost_not_configured", "restoring to a mailbox needs a smarthost (SMARTHOST_ADDR)"}},
		{is(app.ErrSmarthostRefused), errorCode{"smarthost_refused", ""}},
	},
}

// classify maps err to its status, code and client-facing message: the status from its
// kind, the code from the first of the kind's namedErrors that matches, else the kind's.
// Unknown errors are 500 internal with a generic message: their text may reveal internals.
func classify(err error) apiError {
	kind := kindOf(err)
	c := codeOf(kind, err)
	e := apiError{status: kindStatus[kind], Code: c.code, Message: c.message}
	if e.Message == "" {
		e.Message = err.Error()
	}
	return withDetails(e, err)
}

// kindOf returns err's kind (fault.KindOf), or the kind of the standard library's errors
// the contract names: a body over MaxBodyBytes, a database that does not answer.
func kindOf(err error) fault.Kind {
	if k := fault.KindOf(err); k != fault.Other {
		return k
	}
	switch {
	case isBodyTooLarge(err):
		return fault.TooLarge
	case isDatabaseDown(err):
		return fault.Unavailable
	}
	return fault.Other
}

// codeOf returns the code of err, of kind kind.
func codeOf(kind fault.Kind, err error) errorCode {
	for _, n := range namedErrors[kind] {
		if n.match(err) {
			return n.errorCode
		}
	}
	return kindCodes[kind]
}

// withDetails adds the details docs/api.md gives some codes: the fields of a
// validation_failed ({} when none are named) and the status and action that refused an
// invalid_transition.
func withDetails(e apiError, err error) apiError {
	var fe fault.FieldsError
	var te *domain.TransitionError
	switch {
	case e.Code == "validation_failed":
		fields := map[string]string{}
		if errors.As(err, &fe) && fe.InvalidFields() != nil {
			fields = fe.InvalidFields()
		}
		e.Message = (&ValidationError{Fields: fields}).Error()
		e.Details = map[string]any{"fields": fields}
	case e.Code == "invalid_transition" && errors.As(err, &te):
		e.Message = te.Error()
		e.Details = map[string]any{"status": te.State, "action": te.Action}
	}
	return e
}

// isBodyTooLarge recognises a request body over MaxBodyBytes.
func isBodyTooLarge(err error) bool {
	var tooBig *http.MaxBytesError
	return errors.Is(err, ErrPayloadTooLarge) || errors.As(err, &tooBig)
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
		// 503: a part the request needs is down, busy or not set up (the PDF service, the
		// smarthost, the database): the operator's warning, not a fault of the server.
		level := slog.LevelError
		if e.status == http.StatusServiceUnavailable {
			level = slog.LevelWarn
		}
		logger.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path,
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
