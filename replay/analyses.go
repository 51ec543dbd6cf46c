package replay

import (
	"sync"

	"github.com/procgraph/procgraph/internal/cache"
	"github.com/procgraph/procgraph/signature"
)

// maxCachedAnalysisBytes bounds the analysis cache by the code of its keys
// and the source of its analyses (least recently used entries go).
const maxCachedAnalysisBytes = 8 << 20

// analysisCache keeps analyses by dialect and the very code analysed (its
// zero value is ready):
// signature.Analyze is a function of those two alone, so an entry is what
// analysing that code again would give, and code that differs by a byte
// (a stored version whose code no longer matches its hash) is a miss,
// analysed anew. The checks on an analysis (prepare: the stored hash and
// signature) run on every use, cached or not.
type analysisCache struct {
	once sync.Once
	m    *cache.Cache[string, *signature.Analysis]
}

// entries returns the cache, made on first use.
func (c *analysisCache) entries() *cache.Cache[string, *signature.Analysis] {
	c.once.Do(func() {
		c.m = cache.NewWeighted(maxCachedAnalysisBytes, func(k string, a *signature.Analysis) int {
			return len(k) + len(a.Source) + 512
		})
	})
	return c.m
}

// analyse is the package's analyse through the cache. The Block and its
// Analysis are the caller's own (copies); errors are not kept.
func (c *analysisCache) analyse(code, dialect string) (*Block, error) {
	key := dialect + "\x00" + code
	if a, ok := c.entries().Get(key); ok {
		d, err := signature.ParseDialect(dialect)
		if err != nil {
			return nil, err
		}
		a = a.Clone()
		return &Block{Dialect: d, Analysis: a, Name: a.Name}, nil
	}
	b, err := analyse(code, dialect)
	if err != nil {
		return nil, err
	}
	c.entries().Add(key, b.Analysis.Clone())
	return b, nil
}
