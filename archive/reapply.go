package archive

import (
	"context"
	"fmt"

	"github.com/mailledger/mailledger/database"
)

// ReturnedFiles finds the messages erasure requestID removed (erased and purged) whose
// files are in the store again, as after a restore of the store from a backup, and marks
// them not deleted: the next purge deletes their files once more (an active legal hold
// still keeps them). It returns how many it found.
func (a *Archive) ReturnedFiles(ctx context.Context, tenant, requestID string) (int, error) {
	q := `SELECT id FROM metadata WHERE erased_by = ? AND tenant_id = ? AND deleted = 1`
	rows, err := a.db.QueryContext(ctx, a.db.Rebind(q), requestID, tenant)
	if err != nil {
		return 0, fmt.Errorf("erased messages: %w", err)
	}
	ids, err := scanIDs(rows)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	byKey := make(map[string]int64, len(ids))
	for _, id := range ids {
		byKey[MessageKey(tenant, id)] = id
	}
	var back []int64
	err = a.blobs.List(ctx, tenant+"/", func(key string) error {
		if id, ok := byKey[key]; ok {
			back = append(back, id)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list the store: %w", err)
	}
	for start := 0; start < len(back); start += removeChunk {
		chunk := back[start:min(start+removeChunk, len(back))]
		q := `UPDATE metadata SET deleted = 0 WHERE id IN (` + database.InList(len(chunk)) + `)`
		if _, err := a.db.ExecContext(ctx, a.db.Rebind(q), int64Args(chunk)...); err != nil {
			return 0, fmt.Errorf("mark returned files: %w", err)
		}
	}
	return len(back), nil
}
