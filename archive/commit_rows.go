package archive

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// Recipient kinds in rcpt.kind.
const (
	KindTo       = "to"
	KindCc       = "cc"
	KindBcc      = "bcc"
	KindEnvelope = "envelope"
)

// childRows gathers the rcpt, address_role and attachment rows of a whole batch, inserted together
// with a few multi-row statements instead of two per message.
type childRows struct {
	rcpt, att, roles, tags []any
}

const (
	rcptCols, attCols, roleCols = 4, 6, 5
	childChunk                  = 400 // rows per statement
)

func (c *childRows) add(id, dateKey int64, m *Parsed) {
	c.addAddresses(id, dateKey, m)
	for _, at := range m.Attachments {
		c.att = append(c.att, id, at.Seq, database.Clip(cleanText(at.Name), 512), database.Clip(at.Type, 255), at.Size, hex.EncodeToString(at.Digest[:]))
	}
	c.addTags(id, m.Tags)
}

// addAddresses adds m's rcpt and address_role rows (dateKey: its DateKey).
func (c *childRows) addAddresses(id, dateKey int64, m *Parsed) {
	for _, group := range []struct {
		kind  string
		addrs []string
	}{{KindTo, m.To}, {KindCc, m.Cc}, {KindBcc, m.Bcc}, {KindEnvelope, m.Envelope}} {
		for _, addr := range group.addrs {
			c.rcpt = append(c.rcpt, id, database.Clip(addr, 255), database.Clip(domainOf(addr), 255), group.kind)
		}
	}
	for _, r := range m.Roles {
		c.roles = append(c.roles, id, int(r.Role), r.Key, analyzer.DomainOf(r.Key), dateKey)
	}
}

// roleInsert is the head of a multi-row INSERT of roleCols columns into address_role.
const roleInsert = `INSERT INTO address_role (id, role, addr, domain, datekey) VALUES `

func (c *childRows) insert(ctx context.Context, tx *database.Tx) error {
	if err := insertChunked(ctx, tx, `INSERT INTO rcpt (id, "to", todomain, kind) VALUES `, c.rcpt, rcptCols); err != nil {
		return fmt.Errorf("insert rcpt: %w", err)
	}
	if err := insertChunked(ctx, tx, roleInsert, c.roles, roleCols); err != nil {
		return fmt.Errorf("insert address roles: %w", err)
	}
	if err := insertChunked(ctx, tx, `INSERT INTO attachment (message_id, seq, name, type, size, digest) VALUES `, c.att, attCols); err != nil {
		return fmt.Errorf("insert attachment: %w", err)
	}
	if err := insertChunked(ctx, tx, `INSERT INTO message_tag (id, tag) VALUES `, c.tags, tagCols); err != nil {
		return fmt.Errorf("insert tags: %w", err)
	}
	return nil
}

// insertChunked inserts the flat args, cols values a row, childChunk rows a statement.
func insertChunked(ctx context.Context, tx *database.Tx, prefix string, args []any, cols int) error {
	step := childChunk * cols
	for start := 0; start < len(args); start += step {
		chunk := args[start:min(start+step, len(args))]
		if _, err := tx.Exec(ctx, prefix+database.Placeholders(len(chunk)/cols, cols), chunk...); err != nil {
			return err
		}
	}
	return nil
}

func domainOf(addr string) string {
	if at := strings.LastIndexByte(addr, '@'); at >= 0 {
		return addr[at+1:]
	}
	return ""
}

// cleanText makes s storable in every dialect: valid UTF-8 without NUL bytes.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}
