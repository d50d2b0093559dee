package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// assessedAddresses are the addresses whose erasure is assessed: the heaviest of the pool
// (in about a fifth of all mail) and the lightest.
var assessedAddresses = []assessee{
	{name: "heaviest", addr: 0, goal: time.Second},
	{name: "rare", addr: addressCount - 1, goal: 100 * time.Millisecond},
}

type assessee struct {
	name string
	addr int
	goal time.Duration
}

// assessResult is the timed assessments of one address.
type assessResult struct {
	who   assessee
	scope archive.Scope
	holds []archive.Hold
	times []time.Duration
}

// median of the timed runs.
func (a assessResult) median() time.Duration {
	s := slices.Clone(a.times)
	slices.Sort(s)
	return percentile(s, 0.5)
}

func (a assessResult) max() time.Duration { return slices.Max(a.times) }

// timeAssess runs Archive.Assess (what the erasure assessor calls: the scope and the
// blocking holds in one statement over address_role) for one address once untimed, then
// runs times.
func timeAssess(ctx context.Context, arc *archive.Archive, g *generator, who assessee, runs int) (assessResult, error) {
	res := assessResult{who: who}
	addrs := []string{g.addrs[who.addr].addr}
	for i := range runs + 1 {
		start := time.Now()
		scope, holds, _, err := arc.Assess(ctx, tenant, addrs)
		if err != nil {
			return res, fmt.Errorf("assess %s: %w", addrs[0], err)
		}
		if i > 0 {
			res.times = append(res.times, time.Since(start))
		}
		res.scope, res.holds = scope, holds
	}
	return res, nil
}

// check compares the last assessment with the oracle: the archive has no legal hold.
func (a assessResult) check(g *generator, oracle *counts) []string {
	var wrong []string
	if want := oracle.scope[a.who.addr].scope(); a.scope != want {
		wrong = append(wrong, fmt.Sprintf("assessment of %s: %+v; want %+v", g.addrs[a.who.addr].addr, a.scope, want))
	}
	if len(a.holds) > 0 {
		wrong = append(wrong, fmt.Sprintf("assessment of %s: holds %v; want none", g.addrs[a.who.addr].addr, a.holds))
	}
	return wrong
}
