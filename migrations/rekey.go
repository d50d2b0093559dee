package migrations

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"

	"github.com/mailledger/mailledger/analyzer"
	"github.com/mailledger/mailledger/database"
)

// The Go migration after address_role: the rows that migration copied from the old
// columns (lower-cased, as written: a Unicode domain, or its xn-- form, or a quoted local
// part) and the values of the legal holds placed before the address rule get the rule's
// keys (analyzer.Normalize, analyzer.NormalizeDomain), the form every new row and hold
// has. Without it a hold on "bücher.example" placed before the upgrade would not cover
// mail archived after it (keyed "xn--bcher-kva.example"), nor a new hold the old mail.

// rekeyVersion is the migration's version in each dialect: the one after address_role.
var rekeyVersion = map[database.Dialect]int64{database.SQLite: 8, database.Postgres: 8, database.MySQL: 9}

func rekeyMigration(d database.Dialect) *goose.Migration {
	return goose.NewGoMigration(rekeyVersion[d], &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		if err := rekeyRoles(ctx, tx, d); err != nil {
			return fmt.Errorf("address keys of address_role: %w", err)
		}
		if err := rekeyHolds(ctx, tx, d); err != nil {
			return fmt.Errorf("address keys of legal_holds: %w", err)
		}
		return nil
	}}, nil)
}

// rekeyRoles moves the rows of each address whose key differs to that key, merging with
// a row the message already has under the key (same id and role).
func rekeyRoles(ctx context.Context, tx *sql.Tx, d database.Dialect) error {
	moves, err := changedKeys(ctx, tx, `SELECT DISTINCT addr FROM address_role`, analyzer.Normalize)
	if err != nil {
		return err
	}
	insert := database.Rebind(d, `INSERT INTO address_role (id, role, addr, domain)
		SELECT r.id, r.role, ?, ? FROM address_role r WHERE r.addr = ? AND NOT EXISTS
		(SELECT 1 FROM address_role k WHERE k.id = r.id AND k.role = r.role AND k.addr = ?)`)
	remove := database.Rebind(d, `DELETE FROM address_role WHERE addr = ?`)
	for old, key := range moves {
		if _, err := tx.ExecContext(ctx, insert, key, analyzer.DomainOf(key), old, key); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, remove, old); err != nil {
			return err
		}
	}
	return nil
}

// rekeyHolds gives every hold's value its key (a value the rule refuses stays).
func rekeyHolds(ctx context.Context, tx *sql.Tx, d database.Dialect) error {
	update := database.Rebind(d, `UPDATE legal_holds SET value = ? WHERE type = ? AND value = ?`)
	for typ, norm := range map[string]func(string) (string, error){"address": analyzer.Normalize, "domain": analyzer.NormalizeDomain} {
		moves, err := changedKeys(ctx, tx, database.Rebind(d, `SELECT DISTINCT value FROM legal_holds WHERE type = '`+typ+`'`), norm)
		if err != nil {
			return err
		}
		for old, key := range moves {
			if _, err := tx.ExecContext(ctx, update, key, typ, old); err != nil {
				return err
			}
		}
	}
	return nil
}

// changedKeys reads the values of query and returns those whose key differs, old → key.
func changedKeys(ctx context.Context, tx *sql.Tx, query string, key func(string) (string, error)) (map[string]string, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	moves := map[string]string{}
	for rows.Next() {
		var old string
		if err := rows.Scan(&old); err != nil {
			return nil, err
		}
		if k, err := key(old); err == nil && k != old {
			moves[old] = k
		}
	}
	return moves, rows.Err()
}
