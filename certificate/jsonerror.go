package certificate

import (
	"errors"
	"fmt"
	"io"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// describeJSONError says in words what is wrong with a JSON document that did not
// unmarshal, naming the place by its JSON pointer (RFC 6901) and never a Go type.
func describeJSONError(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		return describeSemantic(se)
	}
	var sy *jsontext.SyntacticError
	if errors.As(err, &sy) {
		return fmt.Sprintf("not JSON: %s at byte %d%s", syntaxReason(sy.Err), sy.ByteOffset, within(sy.JSONPointer))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "not JSON: unexpected end of the file"
	}
	return "not JSON"
}

func describeSemantic(se *jsonv2.SemanticError) string {
	ptr := se.JSONPointer
	switch {
	case errors.Is(se.Err, jsonv2.ErrUnknownName):
		return fmt.Sprintf("unknown member %q%s", ptr.LastToken(), within(ptr.Parent()))
	case se.GoType != nil && se.JSONKind != 0 && se.Err == nil:
		return fmt.Sprintf("%s is %s; want %s", pointerName(ptr), kindName(se.JSONKind), wantName(se.GoType))
	case se.GoType != nil:
		return fmt.Sprintf("%s is not %s", pointerName(ptr), wantName(se.GoType))
	}
	return fmt.Sprintf("%s is not valid", pointerName(ptr))
}

func syntaxReason(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of the file"
	}
	if err == nil {
		return "invalid syntax"
	}
	return err.Error()
}

// within is " in <pointer>", or "" for the top-level value.
func within(ptr jsontext.Pointer) string {
	if ptr == "" {
		return ""
	}
	return " in " + string(ptr)
}

// pointerName names a value by its pointer; the top-level value is "the document".
func pointerName(ptr jsontext.Pointer) string {
	if ptr == "" {
		return "the document"
	}
	return string(ptr)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a value of another kind"
}

// wantName is the JSON kind that a Go type takes.
func wantName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return wantName(t.Elem())
	}
	return "another kind of value"
}
