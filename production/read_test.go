package production_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/production"
)

// TestCheckedRefusesWhatCannotBeProduced: a message that does not parse, or that has more
// attachments than a three-digit sequence numbers, is ErrUnreadable, its text naming the
// message and the reason; the archive's other errors pass unchanged; a message within the
// bounds is returned as read.
func TestCheckedRefusesWhatCannotBeProduced(t *testing.T) {
	withAttachments := func(n int) *archive.Document {
		return document(7, "raw", &archive.Parsed{Attachments: make([]archive.Attachment, n)})
	}
	parseErr := errors.New("parse mime: boom")
	for _, tc := range []struct {
		name    string
		doc     *archive.Document
		err     error
		wantErr error
		text    string
	}{
		{name: "does not parse", err: &archive.UnparsableError{ID: 7, Err: parseErr}, wantErr: production.ErrUnreadable,
			text: "message cannot be produced: message 7: parse mime: boom"},
		{name: "too many attachments", doc: withAttachments(production.MaxAttachments + 1), wantErr: production.ErrUnreadable,
			text: "message cannot be produced: message 7 has 1000 attachments, more than 999"},
		{name: "integrity", err: archive.ErrIntegrity, wantErr: archive.ErrIntegrity, text: archive.ErrIntegrity.Error()},
		{name: "not found", err: archive.ErrNotFound, wantErr: archive.ErrNotFound, text: archive.ErrNotFound.Error()},
		{name: "the most attachments", doc: withAttachments(production.MaxAttachments)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := production.Checked(func(context.Context, string, int64) (*archive.Document, error) { return tc.doc, tc.err })
			got, err := read(context.Background(), "acme", 7)
			if tc.wantErr == nil {
				require.NoError(t, err)
				assert.Same(t, tc.doc, got)
				return
			}
			assert.ErrorIs(t, err, tc.wantErr)
			assert.Nil(t, got)
			assert.Equal(t, tc.text, err.Error())
		})
	}
}
