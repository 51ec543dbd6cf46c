package procedures

import "github.com/procgraph/procgraph/internal/cache"

// maxCachedProps bounds a propCache (least recently used entries go).
const maxCachedProps = 4096

// propCache keeps what make derives from one property of one catalogue
// tool, by catalogue revision, tool and property. A revision is the hash
// of the tools (NewCatalogue), so an entry is never another catalogue's;
// a catalogue without a revision is not cached. Safe for concurrent use.
type propCache[T any] struct {
	make func(cat *Catalogue, tool, keyword string) *T
	m    *cache.Cache[[3]string, *T]
}

// newPropCache returns an empty propCache deriving with make.
func newPropCache[T any](make func(cat *Catalogue, tool, keyword string) *T) *propCache[T] {
	return &propCache[T]{make: make, m: cache.New[[3]string, *T](maxCachedProps)}
}

func (c *propCache[T]) get(cat *Catalogue, tool, keyword string) *T {
	if cat == nil || cat.Revision == "" {
		return c.make(cat, tool, keyword)
	}
	k := [3]string{cat.Revision, tool, keyword}
	if p, ok := c.m.Get(k); ok {
		return p
	}
	p := c.make(cat, tool, keyword)
	c.m.Add(k, p)
	return p
}

// catalogueCaches are what is derived from a catalogue's tools, kept with
// the catalogue (made by NewCatalogue and StoredCatalogue), so that the
// stores' shared catalogue derives each once and no cache outlives it.
type catalogueCaches struct {
	props   *propCache[toolProp]   // TypedSchema's tool properties
	schemas *propCache[toolSchema] // ToolInputSchema's compiled schemas
}

func newCatalogueCaches() *catalogueCaches {
	return &catalogueCaches{props: newPropCache(newToolProp), schemas: newPropCache(newToolSchema)}
}

// toolProp is newToolProp of tool's keyword, from c's cache (c made
// otherwise, or nil: derived each time).
func (c *Catalogue) toolProp(tool, keyword string) *toolProp {
	if c == nil || c.caches == nil {
		return newToolProp(c, tool, keyword)
	}
	return c.caches.props.get(c, tool, keyword)
}

// toolSchema is newToolSchema of tool, as toolProp.
func (c *Catalogue) toolSchema(tool string) *toolSchema {
	if c == nil || c.caches == nil {
		return newToolSchema(c, tool, "")
	}
	return c.caches.schemas.get(c, tool, "")
}
