package neo4j

import (
	"context"
	"sync/atomic"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// searchFreshness keeps read-your-writes for relevance search over the
// eventually consistent procedure_search index (cypher/schema/03_search.cypher):
// a search that follows a commit of this store that changed a search text
// first waits until the index has applied it (search_refresh.cypher); a
// search that follows none costs nothing more. Writes of other processes
// become searchable when the index applies them, without waiting.
type searchFreshness struct {
	// written counts this store's commits that changed a search text.
	written atomic.Uint64
	// shown is the count of written the index is known to show; turn is
	// held by the one refresh running, which alone moves shown.
	shown atomic.Uint64
	turn  chan struct{}
}

func newSearchFreshness() *searchFreshness {
	return &searchFreshness{turn: make(chan struct{}, 1)}
}

// wrote notes a committed write that changed a search text.
func (f *searchFreshness) wrote() { f.written.Add(1) }

// awaitSearch returns once the search index shows every search text this
// store committed before the call: at once when it is known to, else after
// one refresh, which the searches waiting meanwhile share.
func (s *Store) awaitSearch(ctx context.Context) error {
	f := s.searchFresh
	want := f.written.Load()
	if f.shown.Load() >= want {
		return nil
	}
	select {
	case f.turn <- struct{}{}:
	case <-ctx.Done():
		return s.mapError("search", ctx.Err())
	}
	defer func() { <-f.turn }()
	if f.shown.Load() >= want {
		return nil
	}
	upTo := f.written.Load()
	if _, err := query(ctx, s, "search", neo4j.AccessModeRead, "search_refresh", nil); err != nil {
		return err
	}
	f.shown.Store(upTo)
	return nil
}
