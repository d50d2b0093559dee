package identity

import (
	"container/list"
	"crypto/sha256"
	"net/netip"
	"sync"
	"time"
)

// DefaultLimiterCapacity bounds each table of a FailureLimiter: the (client IP, user
// name) pairs and the client networks it remembers.
const DefaultLimiterCapacity = 100_000

// FailureLimiter counts failed logins and refuses further attempts (429) once PerUser
// failures of one client IP for one user name, or PerIP failures of one client network
// across all user names, fell within Window. A client network is the IPv4 address, or the
// /64 of an IPv6 address (one host usually holds a whole /64).
//
// Memory is bounded: each table keeps at most Capacity entries of at most PerUser (or
// PerIP) timestamps, keyed by a SHA-256 digest so that long user names cost nothing. When
// a table is full, entries whose failures are all older than Window go first, then the
// entries that are not blocking, oldest failure first; a blocking entry is evicted only
// when every entry blocks. So a flood of distinct unknown user names cannot lift the
// limit on a real user.
type FailureLimiter struct {
	PerUser  int
	PerIP    int
	Window   time.Duration
	Capacity int
	now      func() time.Time

	mu    sync.Mutex
	pairs *failureTable
	nets  *failureTable
}

// NewFailureLimiter returns a limiter of perUser failures per client IP and user name,
// and perIP failures per client network, within window; it keeps DefaultLimiterCapacity
// entries per table.
func NewFailureLimiter(perUser, perIP int, window time.Duration) *FailureLimiter {
	return newFailureLimiter(perUser, perIP, window, DefaultLimiterCapacity, time.Now)
}

func newFailureLimiter(perUser, perIP int, window time.Duration, capacity int, now func() time.Time) *FailureLimiter {
	return &FailureLimiter{PerUser: perUser, PerIP: perIP, Window: window, Capacity: capacity, now: now,
		pairs: newFailureTable(perUser, capacity, window), nets: newFailureTable(perIP, capacity, window)}
}

// Blocked reports whether ip may not try username now.
func (l *FailureLimiter) Blocked(ip, username string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	return l.pairs.count(pairKey(ip, username), now) >= l.PerUser || l.nets.count(netKey(ip), now) >= l.PerIP
}

// Fail records a failed attempt of ip for username.
func (l *FailureLimiter) Fail(ip, username string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.pairs.add(pairKey(ip, username), now)
	l.nets.add(netKey(ip), now)
}

// Succeed forgets the failures of ip for username. The failures of ip's network stay:
// one valid account must not let a client try other names without limit.
func (l *FailureLimiter) Succeed(ip, username string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pairs.remove(pairKey(ip, username))
}

// pairKey is the table key of a client IP and a user name.
func pairKey(ip, username string) string {
	sum := sha256.Sum256([]byte(ip + "\x00" + username))
	return string(sum[:])
}

// netKey is the table key of the client network of ip: the IPv4 address, or the /64 of an
// IPv6 address.
func netKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		sum := sha256.Sum256([]byte(ip))
		return string(sum[:])
	}
	addr = addr.Unmap()
	if addr.Is6() {
		prefix, _ := addr.Prefix(64)
		return prefix.String()
	}
	return addr.String()
}

// failureTable remembers the recent failures of up to capacity keys.
type failureTable struct {
	max      int
	capacity int
	window   time.Duration
	entries  map[string]*list.Element
	// counting and blocking hold the entries below and at max failures, each ordered by
	// its newest failure, oldest first.
	counting, blocking *list.List
}

type failureEntry struct {
	key   string
	times []time.Time // the newest failures within the window, at most max, oldest first
	list  *list.List
}

func newFailureTable(limit, capacity int, window time.Duration) *failureTable {
	return &failureTable{max: max(limit, 1), capacity: max(capacity, 1), window: window,
		entries: map[string]*list.Element{}, counting: list.New(), blocking: list.New()}
}

// count returns the failures of key within the window before now.
func (t *failureTable) count(key string, now time.Time) int {
	el, ok := t.entries[key]
	if !ok {
		return 0
	}
	e := el.Value.(*failureEntry)
	e.times = t.recent(e.times, now)
	if len(e.times) == 0 {
		t.remove(key)
	}
	return len(e.times)
}

// add records a failure of key at now, evicting as the table's order says when full.
func (t *failureTable) add(key string, now time.Time) {
	el, ok := t.entries[key]
	var e *failureEntry
	if ok {
		e = el.Value.(*failureEntry)
		e.list.Remove(el)
	} else {
		e = &failureEntry{key: key}
	}
	e.times = append(t.recent(e.times, now), now)
	if len(e.times) > t.max {
		e.times = e.times[len(e.times)-t.max:]
	}
	e.list = t.counting
	if len(e.times) >= t.max {
		e.list = t.blocking
	}
	t.entries[key] = e.list.PushBack(e)
	for len(t.entries) > t.capacity {
		t.evict(now)
	}
}

// evict drops one entry: an expired blocking one, else the oldest counting one, else the
// oldest blocking one. (The oldest counting entry is expired if any counting one is.)
func (t *failureTable) evict(now time.Time) {
	victim := t.counting.Front()
	if front := t.blocking.Front(); front != nil {
		e := front.Value.(*failureEntry)
		if victim == nil || !e.times[len(e.times)-1].After(now.Add(-t.window)) {
			victim = front
		}
	}
	t.remove(victim.Value.(*failureEntry).key)
}

func (t *failureTable) remove(key string) {
	if el, ok := t.entries[key]; ok {
		el.Value.(*failureEntry).list.Remove(el)
		delete(t.entries, key)
	}
}

// recent drops the failures older than the window.
func (t *failureTable) recent(times []time.Time, now time.Time) []time.Time {
	cut := now.Add(-t.window)
	i := 0
	for i < len(times) && !times[i].After(cut) {
		i++
	}
	return times[i:]
}
