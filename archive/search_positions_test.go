package archive

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/database"
	"github.com/mailledger/mailledger/database/dbtest"
)

// The "long" fixture has pairs that PostgreSQL's positions cannot hold (docs/architecture.md,
// "Search"; analyzer/positions.go): a word's occurrences past its 256th, and words past
// position 16,381. Every database must still find those pairs, and never a pair the text
// does not hold.
func init() {
	var b strings.Builder
	b.WriteString("From: long@long.test\nTo: bob@beta.test\nSubject: long message\nDate: Thu, 12 Feb 2026 10:00:00 +0000\n\n")
	b.WriteString(strings.Repeat("oftword gap\n", 300)) // oftword keeps its first 256 positions
	b.WriteString("oftword lateafter\n")                // its 301st occurrence: not kept
	b.WriteString(strings.Repeat("fill ", 16400))       // past the last position kept
	b.WriteString("\nbeyonda beyondb\n")
	searchFixtures["long"] = b.String()
	searchTable = append(searchTable, []struct {
		q    string
		want []string
	}{
		{`"oftword gap"`, []string{"long"}},
		{`"gap oftword"`, []string{"long"}},
		{`"oftword lateafter"`, []string{"long"}},
		{"oftword.lateafter", []string{"long"}},
		{`"lateafter oftword"`, nil},
		{`"beyonda beyondb"`, []string{"long"}},
		{`"beyondb beyonda"`, nil},
		{`"lateafter fill"`, []string{"long"}},
		{`"fill beyonda"`, []string{"long"}},
		{`"beyondb fill"`, nil},
		{"beyondb", []string{"long"}},
		{"long message beyonda", []string{"long"}},
	}...)
}

// TestSearchAnswersOnPostgresDocumentsOfThePreviousRelease: documents written as the
// previous release wrote them (array_to_tsvector of the terms: every pair a lexeme, no
// positions) give the same answers as the current ones, so an upgrade needs no reindex
// to keep finding old mail.
func TestSearchAnswersOnPostgresDocumentsOfThePreviousRelease(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, d database.Dialect) {
		if d != database.Postgres {
			t.Skip("PostgreSQL's documents only")
		}
		arc, db := newSearchArchive(t, d)
		ids := loadSearchFixtures(t, arc)
		for name, id := range ids {
			p, err := arc.Prepare(Incoming{Tenant: "default", Raw: []byte(searchFixtures[name])})
			require.NoError(t, err)
			_, err = db.ExecContext(context.Background(), `UPDATE message_search SET document = array_to_tsvector($1::text[]) WHERE id = $2`,
				p.Msg.Terms, id)
			require.NoError(t, err)
		}
		var withPositions int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM message_search WHERE document <> strip(document)`).Scan(&withPositions))
		require.Zero(t, withPositions, "every document is in the old form")
		checkSearchTable(t, arc, ids)
	})
}
