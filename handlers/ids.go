package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mailledger/mailledger/domain/export"
)

// maxNamedIDs bounds how many bad email_ids one answer names.
const maxNamedIDs = 10

// emailIDs decodes the email_ids of an export request exactly, never through a float:
// each element must be a JSON integer from 1 to export.MaxEmailID (2^53-1, the largest
// integer that every JSON reader and the ledger's canonical JSON keep exactly). Anything
// else is a *ValidationError on email_ids naming the bad elements, so that what is
// accepted is what the ledger stores.
type emailIDs []int64

func (ids *emailIDs) UnmarshalJSON(raw []byte) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		*ids = nil
		return nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return &ValidationError{Fields: map[string]string{"email_ids": "must be an array of integers"}}
	}
	out := make([]int64, 0, len(elems))
	var bad []string
	for i, e := range elems {
		id, ok := exactID(e)
		if !ok {
			if len(bad) < maxNamedIDs {
				bad = append(bad, fmt.Sprintf("email_ids[%d] is %s", i, clip(string(e), 40)))
			} else if len(bad) == maxNamedIDs {
				bad = append(bad, "…")
			}
			continue
		}
		out = append(out, id)
	}
	if len(bad) > 0 {
		return &ValidationError{Fields: map[string]string{"email_ids": fmt.Sprintf(
			"ids are integers from 1 to %d; %s", export.MaxEmailID, strings.Join(bad, ", "))}}
	}
	*ids = out
	return nil
}

// exactID reads one JSON integer literal in 1..export.MaxEmailID.
func exactID(raw json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || strings.ContainsAny(s, `.eE"+`) || s[0] == '-' {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 || id > export.MaxEmailID {
		return 0, false
	}
	return id, true
}

// clip shortens s to at most n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// exportRequest is export.Request with email_ids decoded exactly.
type exportRequest struct {
	export.Request
	EmailIDs emailIDs `json:"email_ids"`
}

// request returns the export.Request.
func (r exportRequest) request() export.Request {
	req := r.Request
	req.EmailIDs = []int64(r.EmailIDs)
	return req
}
