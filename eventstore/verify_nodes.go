package eventstore

import (
	"context"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
)

// nodeChecker compares the interior nodes that Verify's walk completes with the rows of
// merkle_nodes, which proofs and RootAt read instead of the leaves. The walk's visitor
// collects the completed nodes of at least minStoredLevel; check compares them a page at a
// time, one range query per level.
type nodeChecker struct {
	store   *Store
	pending []treeNode
	checked map[uint]uint64 // level -> how many nodes of that level were compared
}

func newNodeChecker(s *Store) *nodeChecker {
	return &nodeChecker{store: s, checked: map[uint]uint64{}}
}

// visit is the compact.Range visitor of the walk.
func (c *nodeChecker) visit(id compact.NodeID, hash []byte) {
	if id.Level >= minStoredLevel {
		c.pending = append(c.pending, treeNode{level: id.Level, index: id.Index, hash: toHash(hash)})
	}
}

// check compares the pending nodes with their rows, naming the first bad one in the order
// the walk completed them (by the last position each covers).
func (c *nodeChecker) check(ctx context.Context) error {
	stored, err := c.readPending(ctx)
	if err != nil {
		return err
	}
	for _, n := range c.pending {
		row, ok := stored[n.level][n.index]
		switch {
		case !ok:
			return nodeError(n.level, n.index, "row missing from merkle_nodes")
		case row != n.hash.String():
			return nodeError(n.level, n.index, fmt.Sprintf("stored hash %q, the events give %s", row, n.hash))
		}
		c.checked[n.level]++
	}
	c.pending = c.pending[:0]
	return nil
}

// readPending reads the rows of the pending nodes: per level, the contiguous index range the
// page completed. A row that does not parse as a hash is kept as read, so that it differs.
func (c *nodeChecker) readPending(ctx context.Context) (map[uint]map[uint64]string, error) {
	lo, hi := map[uint]uint64{}, map[uint]uint64{}
	for _, n := range c.pending {
		if _, seen := lo[n.level]; !seen || n.index < lo[n.level] {
			lo[n.level] = n.index
		}
		hi[n.level] = max(hi[n.level], n.index)
	}
	out := map[uint]map[uint64]string{}
	q := c.store.db.Rebind(`SELECT idx, hash FROM merkle_nodes WHERE level = ? AND idx >= ? AND idx <= ?`)
	for level := range lo {
		rows, err := c.store.db.QueryContext(ctx, q, level, int64(lo[level]), int64(hi[level]))
		if err != nil {
			return nil, fmt.Errorf("read merkle nodes: %w", err)
		}
		out[level] = map[uint64]string{}
		for rows.Next() {
			var idx int64
			var hash string
			if err := rows.Scan(&idx, &hash); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read merkle nodes: %w", err)
			}
			out[level][uint64(idx)] = normalHash(hash)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read merkle nodes: %w", err)
		}
	}
	return out, nil
}

// normalHash returns a stored hash in Hash.String form when it parses, else as stored.
func normalHash(s string) string {
	if h, err := ParseHash(s); err == nil {
		return h.String()
	}
	return s
}

// checkExtra fails on a row that no completed node explains: beyond the tree, below
// minStoredLevel, or with a negative index. Such a row is never read by a proof, but it
// would make a later append fail on its primary key.
func (c *nodeChecker) checkExtra(ctx context.Context) error {
	rows, err := c.store.db.QueryContext(ctx, `SELECT level, COUNT(*) FROM merkle_nodes GROUP BY level`)
	if err != nil {
		return fmt.Errorf("count merkle nodes: %w", err)
	}
	var extra []uint
	for rows.Next() {
		var level int64
		var n uint64
		if err := rows.Scan(&level, &n); err != nil {
			rows.Close()
			return fmt.Errorf("count merkle nodes: %w", err)
		}
		if level < 0 || level >= 64 || n != c.checked[uint(level)] {
			extra = append(extra, uint(level))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count merkle nodes: %w", err)
	}
	if len(extra) == 0 {
		return nil
	}
	return c.firstExtra(ctx, extra[0])
}

// firstExtra names the lowest extra row of level.
func (c *nodeChecker) firstExtra(ctx context.Context, level uint) error {
	var idx int64
	q := c.store.db.Rebind(`SELECT idx FROM merkle_nodes WHERE level = ? AND (idx < 0 OR idx >= ?) ORDER BY idx`)
	if err := c.store.db.QueryRowContext(ctx, q, int64(level), int64(c.checked[level])).Scan(&idx); err != nil {
		return fmt.Errorf("read extra merkle node of level %d: %w", level, err)
	}
	if level < minStoredLevel || idx < 0 || level >= 64 {
		return &VerifyError{Position: 0, Node: &NodeRef{Level: level, Index: uint64(idx)}, Reason: "row that the tree never stores"}
	}
	return nodeError(level, uint64(idx), "row beyond the events' tree")
}

// nodeError names node (level, index), at the last position it covers.
func nodeError(level uint, index uint64, reason string) *VerifyError {
	last := int64((index + 1) << level)
	return &VerifyError{Position: last, Node: &NodeRef{Level: level, Index: index},
		Reason: fmt.Sprintf("positions %d..%d: %s", last-int64(1)<<level+1, last, reason)}
}
