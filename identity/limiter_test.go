package identity

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a settable time for limiter tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLimiterMemoryIsBounded(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newFailureLimiter(3, 1_000_000, time.Minute, 50, c.now)
	for i := range 1000 {
		l.Fail(fmt.Sprintf("10.0.%d.%d", i/256, i%256), fmt.Sprintf("name-%d-%s", i, string(make([]byte, 1000))))
	}
	assert.LessOrEqual(t, len(l.pairs.entries), 50, "pairs kept; want at most the capacity")
	assert.LessOrEqual(t, len(l.nets.entries), 50, "networks kept; want at most the capacity")
	assert.Equal(t, len(l.pairs.entries), l.pairs.counting.Len()+l.pairs.blocking.Len())
}

func TestLimiterEvictsExpiredBeforeBlocking(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newFailureLimiter(2, 1_000_000, time.Minute, 3, c.now)
	l.Fail("10.0.0.1", "old")
	l.Fail("10.0.0.1", "old") // blocking, then expires
	c.t = c.t.Add(2 * time.Minute)
	l.Fail("10.0.0.2", "bob")
	l.Fail("10.0.0.2", "bob") // blocking now
	l.Fail("10.0.0.3", "x")
	l.Fail("10.0.0.4", "y") // the table is over capacity: the expired entry goes first
	_, oldKept := l.pairs.entries[pairKey("10.0.0.1", "old")]
	assert.False(t, oldKept, "the expired entry is evicted first")
	assert.True(t, l.Blocked("10.0.0.2", "bob"))
	l.Fail("10.0.0.5", "z") // now a counting entry goes, not bob
	assert.True(t, l.Blocked("10.0.0.2", "bob"), "a blocking entry outlives counting ones")
	require.Len(t, l.pairs.entries, 3)
}

func TestLimiterWindowEnds(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newFailureLimiter(2, 3, time.Minute, 100, c.now)
	l.Fail("10.0.0.1", "bob")
	l.Fail("10.0.0.1", "bob")
	assert.True(t, l.Blocked("10.0.0.1", "bob"))
	c.t = c.t.Add(61 * time.Second)
	assert.False(t, l.Blocked("10.0.0.1", "bob"), "failures older than the window do not count")
}

func TestNetKeyGroupsIPv6By64(t *testing.T) {
	assert.Equal(t, netKey("2001:db8:1:2::1"), netKey("2001:db8:1:2:ffff::9"))
	assert.NotEqual(t, netKey("2001:db8:1:2::1"), netKey("2001:db8:1:3::1"))
	assert.Equal(t, "192.0.2.7", netKey("::ffff:192.0.2.7"))
	assert.NotEqual(t, netKey("192.0.2.7"), netKey("192.0.2.8"))
}
