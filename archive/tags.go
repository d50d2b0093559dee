package archive

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"github.com/mailledger/mailledger/database"
)

// HeaderTagger tags messages by their header block: the header-check rules (an RE2
// pattern and a tag) of the message's tenant. Prepare asks it for every message, so it is
// safe for concurrent use and keeps its rules in memory (app.HeaderTagger).
type HeaderTagger interface {
	Tags(tenant string, header []byte) []string
}

// MaxTaggedHeader bounds the header block the rules see: a message whose header is longer
// is matched on its first MaxTaggedHeader bytes (RE2 is linear in them).
const MaxTaggedHeader = 1 << 20

// maxTagBytes bounds one stored tag (the column's width).
const maxTagBytes = 255

// HeaderBlock is the header of raw as the header checks see it: the bytes before the
// first empty line, folded lines as they are, at most MaxTaggedHeader of them.
func HeaderBlock(raw []byte) []byte {
	end := len(raw)
	for _, sep := range [][]byte{[]byte("\r\n\r\n"), []byte("\n\n")} {
		if i := bytes.Index(raw, sep); i >= 0 && i < end {
			end = i
		}
	}
	return raw[:min(end, MaxTaggedHeader)]
}

// tagCols is the column count of a message_tag row.
const tagCols = 2

// addTags adds the message_tag rows of message id, one per distinct tag.
func (c *childRows) addTags(id int64, tags []string) {
	seen := map[string]bool{}
	for _, t := range tags {
		t = database.Clip(cleanText(t), maxTagBytes)
		if t != "" && !seen[t] {
			seen[t] = true
			c.tags = append(c.tags, id, t)
		}
	}
}

// fillTags reads the tags of msgs.
func (a *Archive) fillTags(ctx context.Context, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	byID := map[int64]*Message{}
	args := make([]any, len(msgs))
	for i := range msgs {
		msgs[i].Tags = []string{}
		byID[msgs[i].ID] = &msgs[i]
		args[i] = msgs[i].ID
	}
	q := `SELECT id, tag FROM message_tag WHERE id IN (` + database.InList(len(msgs)) + `) ORDER BY id, tag`
	var rows *sql.Rows
	var err error
	if len(msgs) == 1 {
		rows, err = a.db.QueryCached(ctx, q, args...)
	} else {
		rows, err = a.db.QueryContext(ctx, a.db.Rebind(q), args...)
	}
	if err != nil {
		return fmt.Errorf("read tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return err
		}
		if m := byID[id]; m != nil {
			m.Tags = append(m.Tags, tag)
		}
	}
	return rows.Err()
}

// tagCondition restricts a search to messages that carry a tag.
const tagCondition = `EXISTS (SELECT 1 FROM message_tag t WHERE t.id = m.id AND t.tag = ?)`
