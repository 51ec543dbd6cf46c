package procedures

import "sync"

// maxCachedProps bounds a propCache; it is emptied when full.
const maxCachedProps = 4096

// propCache keeps what make derives from one property of one catalogue
// tool, by catalogue revision, tool and property. A revision is the hash
// of the tools (NewCatalogue), so an entry is never another catalogue's;
// a catalogue without a revision is not cached. Safe for concurrent use.
type propCache[T any] struct {
	make func(cat *Catalogue, tool, keyword string) *T

	mu sync.Mutex
	m  map[[3]string]*T
}

func (c *propCache[T]) get(cat *Catalogue, tool, keyword string) *T {
	if cat == nil || cat.Revision == "" {
		return c.make(cat, tool, keyword)
	}
	k := [3]string{cat.Revision, tool, keyword}
	c.mu.Lock()
	p, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = c.make(cat, tool, keyword)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedProps {
		c.m = map[[3]string]*T{}
	}
	c.m[k] = p
	c.mu.Unlock()
	return p
}
