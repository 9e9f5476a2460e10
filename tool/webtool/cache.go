package webtool

import (
	"container/list"
	"sync"
	"time"
)

// Cache defaults.
const (
	DefaultCacheTTL   = 15 * time.Minute
	DefaultCacheBytes = 50 << 20
)

// page is a fetched page as the model's question is asked of it.
type page struct {
	url      string // the URL asked for (the key)
	final    string // where the redirects ended
	markdown string
	bytes    int // the body's size as fetched
	expires  time.Time
}

// cache keeps pages by URL for a time, up to a total size, evicting the
// least recently used first. It is safe for concurrent use.
type cache struct {
	ttl   time.Duration
	limit int
	now   func() time.Time

	mu    sync.Mutex
	items map[string]*list.Element // guarded by mu; values are *page
	order *list.List               // guarded by mu; front is most recent
	size  int                      // guarded by mu; sum of markdown lengths
}

func newCache(ttl time.Duration, limit int, now func() time.Time) *cache {
	return &cache{ttl: ttl, limit: limit, now: now, items: map[string]*list.Element{}, order: list.New()}
}

// get returns the unexpired page of url.
func (c *cache) get(url string) (page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[url]
	if !ok {
		return page{}, false
	}
	p := e.Value.(*page)
	if !c.now().Before(p.expires) {
		c.removeLocked(e)
		return page{}, false
	}
	c.order.MoveToFront(e)
	return *p, true
}

// put stores p under p.url; a page larger than the whole cache is not
// kept.
func (c *cache) put(p page) {
	if len(p.markdown) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[p.url]; ok {
		c.removeLocked(e)
	}
	p.expires = c.now().Add(c.ttl)
	c.items[p.url] = c.order.PushFront(&p)
	c.size += len(p.markdown)
	for c.size > c.limit {
		c.removeLocked(c.order.Back())
	}
}

func (c *cache) removeLocked(e *list.Element) {
	p := c.order.Remove(e).(*page)
	delete(c.items, p.url)
	c.size -= len(p.markdown)
}
