package archive

import (
	"time"

	"github.com/mailledger/mailledger/analyzer"
)

// RetentionPolicy sets the retention of a message when it is archived, from its tenant's
// retention rules and its address roles (app.RetentionPolicy); ok false leaves the
// archive's default (Options.Retention). Commit asks it for every message that is not
// spam, so it is safe for concurrent use and keeps its rules in memory.
type RetentionPolicy interface {
	Retention(tenant string, roles []analyzer.Address) (d time.Duration, ok bool)
}

// retentionOf is how long p is kept: spam's retention, else the policy's, else the
// default.
func (a *Archive) retentionOf(p *Prepared) time.Duration {
	if p.Msg.Spam {
		return a.spam.retention
	}
	if a.policy != nil {
		if d, ok := a.policy.Retention(p.In.Tenant, p.Msg.Roles); ok {
			return d
		}
	}
	return a.retention
}
