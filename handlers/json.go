package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
)

// MaxBodyBytes is the largest request body accepted: 1 MiB.
const MaxBodyBytes = 1 << 20

// writeJSON answers with v as JSON. Callers give nil slices as empty ones: the API wants
// [] for empty arrays and null only for unset values.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"internal error","details":null}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeText answers with a text/plain body.
func writeText(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// limitBody caps every request body at MaxBodyBytes. (A body that declares more is
// refused after authentication, by bodyDeadline: a stranger learns nothing from a 413.)
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// decodeJSON reads one JSON object from the body into v, rejecting unknown fields and
// trailing data: ErrInvalidJSON with a message that names the JSON field and position,
// a *ValidationError from a field's own decoder, a *http.MaxBytesError over
// MaxBodyBytes, or ErrRequestTimeout when the client does not send the body in time.
func decodeJSON(r *http.Request, v any) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	return unmarshalObject(raw, v)
}

// readBody reads the whole body: a *http.MaxBytesError over MaxBodyBytes,
// ErrRequestTimeout when the client does not send it in time, ErrInvalidJSON otherwise.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return nil, err
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%w: the body did not arrive in time", ErrRequestTimeout)
		}
		return nil, fmt.Errorf("%w: the body could not be read", ErrInvalidJSON)
	}
	return raw, nil
}

// unmarshalObject decodes raw, which must be exactly one JSON object, into v.
func unmarshalObject(raw []byte, v any) error {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 {
		return fmt.Errorf("%w: the body is empty; want a JSON object", ErrInvalidJSON)
	}
	if trimmed[0] != '{' {
		return fmt.Errorf("%w: the body must be a JSON object, not %s", ErrInvalidJSON, jsonKind(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err, raw)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON object at %s", ErrInvalidJSON, position(raw, dec.InputOffset()))
	}
	return nil
}

// describeJSONError turns a decoding error into one that names JSON fields and positions,
// never Go types.
func describeJSONError(err error, raw []byte) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		return err
	case errors.As(err, &syntax):
		// Offset counts the bytes read, the offending one included.
		return fmt.Errorf("%w: malformed JSON at %s: %s", ErrInvalidJSON, position(raw, syntax.Offset-1), syntax.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(body)"
		}
		return fmt.Errorf("%w: field %q: want %s, got %s near %s", ErrInvalidJSON, field, wantOf(typ.Type),
			gotOf(typ.Value), position(raw, typ.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("%w: the JSON ends early, at %s", ErrInvalidJSON, position(raw, int64(len(raw))))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%w: unknown field %s", ErrInvalidJSON, strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return fmt.Errorf("%w: the body is not the JSON object this call expects", ErrInvalidJSON)
}

// position says where the byte at offset lies in raw: line and column (both from 1).
func position(raw []byte, offset int64) string {
	offset = min(max(offset, 0), int64(len(raw)))
	before := raw[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// jsonKind names the JSON value that starts raw.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number or other value"
}

// wantOf describes, in JSON's terms, what a Go type accepts.
func wantOf(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return wantOf(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array of " + plural(wantOf(t.Elem()))
	}
	return "an object"
}

// plural turns "an integer" into "integers", "true or false" into "booleans".
func plural(s string) string {
	switch s {
	case "true or false":
		return "booleans"
	case "a non-negative integer":
		return "non-negative integers"
	}
	if rest, ok := strings.CutPrefix(s, "an array of "); ok {
		return "arrays of " + rest
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "an "), "a ")
	return s + "s"
}

// gotOf describes the JSON value that encoding/json reports as value ("string",
// "number 1.5", ...).
func gotOf(value string) string {
	switch {
	case value == "string":
		return "a string"
	case value == "number":
		return "a number"
	case strings.HasPrefix(value, "number "):
		return "the number " + strings.TrimPrefix(value, "number ")
	case value == "bool":
		return "a boolean"
	case value == "array":
		return "an array"
	case value == "object":
		return "an object"
	}
	return value
}
