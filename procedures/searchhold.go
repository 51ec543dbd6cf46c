package procedures

import (
	"context"
	"runtime"
	"strings"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// Bounded searches: a relevance search holds its hits, their documents and
// the ranking in memory while it runs, so only so many run at once.
const (
	// reasonSearches is the reason of a busy refusal of a relevance
	// search: Options.MaxConcurrentSearches of them are running.
	reasonSearches = "searches"
	// searchWait is how long a search past the bound waits for one to end
	// before it is refused: searches take milliseconds, so a burst just
	// past the bound is smoothed, while a flood waits no longer than this
	// (each waiter holds only its request) and is refused.
	searchWait = 250 * time.Millisecond
)

// defaultMaxConcurrentSearches is Options.MaxConcurrentSearches' default:
// two per core.
func defaultMaxConcurrentSearches() int { return 2 * runtime.NumCPU() }

// HoldSearch takes one of the service's Options.MaxConcurrentSearches
// places for a relevance search, the one bound of them for every caller
// (GET /v1/procedures?q=, the planner view with q, MCP
// find_all_procedures with query): it waits up to searchWait for a place,
// then refuses with fault.CodeBusy (reason searches, Retry-After). A request
// that ends while waiting is fault.CodeUnavailable. release gives the place
// back.
func (s *Service) HoldSearch(ctx context.Context) (release func(), err error) {
	release = func() { <-s.searches }
	select {
	case s.searches <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(searchWait)
	defer t.Stop()
	select {
	case s.searches <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, fault.Errorf(fault.CodeBusy, "%d searches are running, the most this server runs at once; try again later", cap(s.searches)).
			WithDetails("reason", reasonSearches).WithDetails("limit", cap(s.searches)).WithDetails(fault.DetailRetryAfter, 1)
	case <-ctx.Done():
		return nil, fault.Errorf(fault.CodeUnavailable, "the request ended while waiting for a search to end")
	}
}

// SearchParts returns the texts a capture adds to its procedure's search
// document: each tool name of the signature and its words (get_task_jobs →
// "get task jobs"), the summary, the cause's name and description, and the
// trigger signals of its metadata ("trigger_signals": strings). A store
// keeps the distinct parts of every capture (search.MergeParts) and indexes
// search.Document of them.
func SearchParts(in CaptureInput) []string {
	var parts []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	for _, t := range in.Signature {
		add(t)
		add(strings.Join(strings.FieldsFunc(strings.TrimPrefix(t, ProcPrefix), func(r rune) bool { return r == '_' }), " "))
	}
	add(in.Version.Summary)
	if in.Cause != nil {
		add(in.Cause.Name)
		add(in.Cause.Description)
	}
	if sig, ok := in.Version.Metadata["trigger_signals"].([]any); ok {
		for _, s := range sig {
			if str, ok := s.(string); ok {
				add(str)
			}
		}
	}
	return parts
}
