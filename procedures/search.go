package procedures

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/procgraph/procgraph/fault"
)

// Relevance search limits.
const (
	// MaxSearchBytes is the longest q accepted (docs/api.md).
	MaxSearchBytes = 512
	// MaxSearchTerms is how many distinct words of q are searched; the
	// rest are ignored.
	MaxSearchTerms = 32
	// MaxSearchHits is how many procedures a store takes from its
	// full-text index, best text relevance first, before the other filters
	// and the ranking apply.
	MaxSearchHits = 1000
	// maxTermBytes bounds one searched word; longer ones are cut.
	maxTermBytes = 64
	// MaxSearchParts bounds the distinct texts a procedure's search
	// document keeps (SearchParts); later ones are not added.
	MaxSearchParts = 64
)

// Bounded searches: a relevance search holds its hits, their documents and
// the ranking in memory while it runs, so only so many run at once.
const (
	// ReasonSearches is the reason of a busy refusal of a relevance
	// search: Options.MaxConcurrentSearches of them are running.
	ReasonSearches = "searches"
	// searchWait is how long a search past the bound waits for one to end
	// before it is refused: searches take milliseconds, so a burst just
	// past the bound is smoothed, while a flood waits no longer than this
	// (each waiter holds only its request) and is refused.
	searchWait = 250 * time.Millisecond
)

// DefaultMaxConcurrentSearches is Options.MaxConcurrentSearches' default:
// two per core.
func DefaultMaxConcurrentSearches() int { return 2 * runtime.NumCPU() }

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
			WithDetails("reason", ReasonSearches).WithDetails("limit", cap(s.searches)).WithDetails(fault.DetailRetryAfter, 1)
	case <-ctx.Done():
		return nil, fault.Errorf(fault.CodeUnavailable, "the request ended while waiting for a search to end")
	}
}

// SearchTerms is the sanitiser of q, the one home of what a relevance
// search looks for: q's words (maximal runs of letters and digits),
// lowercased, distinct, in order, at most MaxSearchTerms, each cut to 64
// bytes. Nothing else of q survives, so no query syntax of a full-text
// engine (Lucene's + - && || ! ( ) { } [ ] ^ " ~ * ? : \ /, AND, OR, NOT)
// reaches one. Returns fault.CodeInvalid (field q) for q over MaxSearchBytes,
// not valid UTF-8, or without any word.
func SearchTerms(q string) ([]string, error) {
	switch {
	case len(q) > MaxSearchBytes:
		return nil, fault.Errorf(fault.CodeInvalid, "q is %d bytes, at most %d are allowed", len(q), MaxSearchBytes).WithDetails("field", "q")
	case !utf8.ValidString(q):
		return nil, fault.Errorf(fault.CodeInvalid, "q is not valid UTF-8").WithDetails("field", "q")
	}
	terms := searchWords(q, MaxSearchTerms)
	if len(terms) == 0 {
		return nil, fault.Errorf(fault.CodeInvalid, "q has no word to search for (letters or digits)").WithDetails("field", "q")
	}
	return terms, nil
}

// searchWords returns up to max distinct lowercased words of s.
func searchWords(s string, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		w = strings.ToLower(w)
		if len(w) > maxTermBytes {
			w = cutUTF8(w, maxTermBytes)
		}
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == max {
			break
		}
	}
	return out
}

func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ValidTerms reports whether terms are what SearchTerms returns: at most
// MaxSearchTerms non-empty lowercase words of letters and digits. Stores
// check it (fail closed) before terms reach a query language.
func ValidTerms(terms []string) bool {
	if len(terms) > MaxSearchTerms {
		return false
	}
	for _, t := range terms {
		if t == "" || len(t) > maxTermBytes || t != strings.ToLower(t) {
			return false
		}
		for _, r := range t {
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
				return false
			}
		}
	}
	return true
}

// SearchParts returns the texts a capture adds to its procedure's search
// document: each tool name of the signature and its words (get_task_jobs →
// "get task jobs"), the summary, the cause's name and description, and the
// trigger signals of its metadata ("trigger_signals": strings). A store
// keeps the distinct parts of every capture (MergeSearchParts) and indexes
// SearchDocument of them.
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

// MergeSearchParts returns old with the parts of add it lacks, in order,
// keeping at most MaxSearchParts.
func MergeSearchParts(old, add []string) []string {
	out := append([]string(nil), old...)
	for _, p := range add {
		if len(out) >= MaxSearchParts {
			break
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// SearchDocument is the text a store indexes for a procedure: its parts,
// one a line.
func SearchDocument(parts []string) string { return strings.Join(parts, "\n") }

// SearchHit is one procedure a store's full-text index matched, with its
// text relevance (the engine's score: BM25 on both stores) and what the
// ranking breaks ties with.
type SearchHit struct {
	Name       string
	Text       float64
	Frequency  int64
	LastUsedAt int64 // Unix milliseconds; 0 never used
	Score      float64
}

// SearchFrequencyWeight is how much frequency counts in a search's score
// (RankHits; a store that ranks in its query language takes it from here).
const SearchFrequencyWeight = 0.1

// RankHits is the one ranking of a relevance search: each hit's Score is
// Text × (1 + 0.1 × ln(1 + Frequency)) — text relevance first, a procedure
// used 10 times scoring 24% above one never used with the same text
// relevance — rounded to 6 decimals; hits are sorted by Score desc, then
// frequency desc, last_used_at desc (never used last), name asc.
func RankHits(hits []SearchHit) {
	for i := range hits {
		h := &hits[i]
		s := h.Text * (1 + SearchFrequencyWeight*math.Log1p(float64(max(h.Frequency, 0))))
		h.Score = math.Round(s*1e6) / 1e6
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		switch {
		case a.Score != b.Score:
			return a.Score > b.Score
		case a.Frequency != b.Frequency:
			return a.Frequency > b.Frequency
		case a.LastUsedAt != b.LastUsedAt:
			return a.LastUsedAt > b.LastUsedAt
		}
		return a.Name < b.Name
	})
}

// PageOf returns the hits of q's page (Offset, Limit; 0 no limit).
func PageOf(hits []SearchHit, q *Query) []SearchHit {
	if q.Offset >= len(hits) {
		return nil
	}
	end := len(hits)
	if q.Limit > 0 && q.Offset+q.Limit < end {
		end = q.Offset + q.Limit
	}
	return hits[q.Offset:end]
}
