package identity

import (
	"sync"
	"time"
)

// FailureLimiter counts failed logins per client IP and user name and refuses further
// attempts once Max failures fell within Window (docs/api.md: 429 after 10 a minute).
type FailureLimiter struct {
	Max    int
	Window time.Duration
	now    func() time.Time

	mu       sync.Mutex
	failures map[string][]time.Time
}

// NewFailureLimiter returns a limiter of max failures per window.
func NewFailureLimiter(max int, window time.Duration) *FailureLimiter {
	return &FailureLimiter{Max: max, Window: window, now: time.Now, failures: map[string][]time.Time{}}
}

func limiterKey(ip, username string) string { return ip + "\x00" + username }

// Blocked reports whether ip may not try username now.
func (l *FailureLimiter) Blocked(ip, username string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recent(limiterKey(ip, username))) >= l.Max
}

// Fail records a failed attempt.
func (l *FailureLimiter) Fail(ip, username string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := limiterKey(ip, username)
	l.failures[k] = append(l.recent(k), l.now())
	if len(l.failures) > 100000 {
		l.failures = map[string][]time.Time{k: l.failures[k]}
	}
}

// Succeed forgets the failures of ip and username.
func (l *FailureLimiter) Succeed(ip, username string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, limiterKey(ip, username))
}

// recent drops failures older than the window; l.mu must be held.
func (l *FailureLimiter) recent(k string) []time.Time {
	cut := l.now().Add(-l.Window)
	ts := l.failures[k]
	i := 0
	for i < len(ts) && ts[i].Before(cut) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.failures, k)
		return nil
	}
	l.failures[k] = ts
	return ts
}
