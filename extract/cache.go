package extract

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"
)

// Cache remembers the results of recent extractions by the document's content, so that a
// document met again (the same attachment in every recipient's copy of a message, in a
// forwarded thread, in each mailbox of a bulk import) is read once. A result is the same
// function of the content, the kind and the size limits whether it comes from the cache
// or from a fresh read, so Cache.Extract returns what Extract would; a read that ended at
// its time limit is not kept (its text depends on the machine's load), so the next copy
// is read again within its own time.
//
// The cache holds at most maxBytes of text and notes (least recently used first out) and
// is safe for concurrent use. The zero of *Cache (nil) caches nothing.
type Cache struct {
	maxBytes int

	mu      sync.Mutex
	bytes   int
	entries map[cacheKey]*list.Element
	order   list.List // of *cacheEntry, most recently used at the front
	hits    uint64
	misses  uint64
}

type cacheKey struct {
	digest [sha256.Size]byte
	kind   string
	// the size limits the result was read within
	maxInput, maxUnzip int64
	maxText            int
}

type cacheEntry struct {
	key cacheKey
	res Result
}

// cacheEntryOverhead is what an entry costs beside its text and note (key, list element,
// map slot), counted against maxBytes so that many empty results stay bounded too.
const cacheEntryOverhead = 256

// NewCache returns a cache of at most maxBytes of results; maxBytes <= 0 returns nil,
// which caches nothing.
func NewCache(maxBytes int) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache{maxBytes: maxBytes, entries: map[cacheKey]*list.Element{}}
}

// Extract is the package's Extract, answered from the cache when the same content was
// read as the same kind within the same size limits.
func (c *Cache) Extract(ctx context.Context, data []byte, contentType, name string, lim Limits) (Result, bool) {
	return c.extract(ctx, nil, data, contentType, name, lim)
}

// ExtractDigest is Extract for a caller that has already hashed data: digest must be the
// SHA-256 of data.
func (c *Cache) ExtractDigest(ctx context.Context, digest [sha256.Size]byte, data []byte, contentType, name string, lim Limits) (Result, bool) {
	return c.extract(ctx, &digest, data, contentType, name, lim)
}

func (c *Cache) extract(ctx context.Context, digest *[sha256.Size]byte, data []byte, contentType, name string, lim Limits) (Result, bool) {
	if c == nil {
		return Extract(ctx, data, contentType, name, lim)
	}
	lim.setDefaults()
	kind := sniff(data, hintOf(contentType, name))
	if kind == "" || int64(len(data)) > lim.MaxInput {
		return Extract(ctx, data, contentType, name, lim)
	}
	if digest == nil {
		sum := sha256.Sum256(data)
		digest = &sum
	}
	key := cacheKey{digest: *digest, kind: kind, maxInput: lim.MaxInput, maxUnzip: lim.MaxUnzip, maxText: lim.MaxText}
	if res, ok := c.get(key); ok {
		return res, true
	}
	res, timed := read(ctx, data, kind, lim)
	if !timed {
		c.put(key, res)
	}
	return res, true
}

// Stats returns how many extractions were answered from the cache and how many were read.
func (c *Cache) Stats() (hits, misses uint64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

func (c *Cache) get(key cacheKey) (Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		c.misses++
		return Result{}, false
	}
	c.hits++
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).res, true
}

func (c *Cache) put(key cacheKey, res Result) {
	size := entrySize(res)
	if size > c.maxBytes/4 {
		return // one large document must not empty the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return // another goroutine read the same document meanwhile
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, res: res})
	c.bytes += size
	for c.bytes > c.maxBytes {
		last := c.order.Back()
		old := last.Value.(*cacheEntry)
		c.order.Remove(last)
		delete(c.entries, old.key)
		c.bytes -= entrySize(old.res)
	}
}

func entrySize(res Result) int {
	return len(res.Text) + len(res.Note) + cacheEntryOverhead
}
