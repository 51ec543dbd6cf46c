package procedures

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"time"

	"github.com/procgraph/procgraph/changes"
)

// DefaultWatchInterval is how often WatchRemote looks.
const DefaultWatchInterval = 5 * time.Second

// WatchRemote publishes a ChangeRemote on the feed whenever what is
// exposed changed in the store without this service publishing it: the
// writes of other instances on the same database. Every interval (default
// DefaultWatchInterval) it reads a marker — the catalogue revision and the
// exposed procedures (up to MaxFindLimit) as planners see them, without
// their counters — and compares it with the last one. It runs until
// ctx ends; a failed read is skipped (the next one compares again).
// Beside it, every authPollEvery, it runs the process's poller of the
// store's authorization revision (watchAuthorization, authcache.go): the
// other half of what other instances write, the half every turn's
// decision trusts.
//
// A change this instance made also moves the marker, so it may be
// followed by one redundant ChangeRemote; subscribers reread on either,
// and rereading is idempotent. The store's authorization revision
// (Store.AuthRevision) does not replace the marker: it moves with what
// changes a procedure's class (and so its exposure) but not with a cause a
// capture links to an exposed procedure, which its description names —
// moving it on those would drop every instance's authorization cache on
// ordinary captures.
func (s *Service) WatchRemote(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	polled := make(chan struct{})
	go func() { defer close(polled); s.watchAuthorization(ctx, authPollEvery) }()
	defer func() { <-polled }()
	last, _ := s.exposedMarker(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m, err := s.exposedMarker(ctx)
		if err != nil || m == last {
			continue
		}
		last = m
		s.feed.Publish(changes.Change{Kind: changes.ChangeRemote})
	}
}

// exposedMarker digests the catalogue revision and the exposed procedures,
// by name, without the counters every replay and capture moves (frequency,
// use count, last use, update time, cause edge frequencies).
func (s *Service) exposedMarker(ctx context.Context) (string, error) {
	cat, err := s.store.Catalogue(ctx)
	if err != nil {
		return "", err
	}
	page, err := s.Exposed(ctx, nil, MaxFindLimit)
	if err != nil {
		return "", err
	}
	sort.Slice(page, func(i, j int) bool { return page[i].Name < page[j].Name })
	h := sha256.New()
	h.Write([]byte(cat.Revision))
	enc := json.NewEncoder(h)
	for _, p := range page {
		q := *p
		q.Frequency, q.UseCount, q.LastUsedAt, q.UpdatedAt = 0, 0, nil, time.Time{}
		q.Causes = make([]CauseLink, len(p.Causes))
		for i, c := range p.Causes {
			q.Causes[i] = CauseLink{Name: c.Name}
		}
		if err := enc.Encode(&q); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
