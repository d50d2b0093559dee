package production

import (
	"context"
	"errors"
	"fmt"

	"github.com/mailledger/mailledger/archive"
)

// ErrUnreadable means a message's file passed the integrity checks but cannot be produced:
// it does not parse, or it has more attachments than a three-digit sequence numbers.
var ErrUnreadable = errors.New("message cannot be produced")

// MaxAttachments is the most attachments one produced email may have: their sequence is
// three digits.
const MaxAttachments = 999

// Reader reads one archived message for a production: (*archive.Archive).ReadDocument,
// or ReadNative for a production of natives only (no parse).
type Reader func(ctx context.Context, tenant string, id int64) (*archive.Document, error)

// Checked returns read with the production's own refusals added: a message that does not
// parse (archive.UnparsableError), or that has more than MaxAttachments attachments, is
// ErrUnreadable; every other error of read is returned as it is.
func Checked(read Reader) Reader {
	return func(ctx context.Context, tenant string, id int64) (*archive.Document, error) {
		doc, err := read(ctx, tenant, id)
		if _, unparsable := errors.AsType[*archive.UnparsableError](err); unparsable {
			return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		if err != nil {
			return nil, err
		}
		if n := len(doc.Msg.Attachments); n > MaxAttachments {
			return nil, fmt.Errorf("%w: message %d has %d attachments, more than %d", ErrUnreadable, id, n, MaxAttachments)
		}
		return doc, nil
	}
}
