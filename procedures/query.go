package procedures

import (
	"math"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/search"
)

// Validate checks q's ranges: the one check of a Query, for the service
// and every store. Returns fault.CodeInvalid naming the field.
func (q *Query) Validate() error {
	switch {
	case q.Limit < 0 || q.Limit > MaxFindLimit:
		return fault.Errorf(fault.CodeInvalid, "limit must be between 1 and %d (0: no limit)", MaxFindLimit).WithDetails("field", "limit")
	case q.Offset < 0:
		return fault.Errorf(fault.CodeInvalid, "offset must not be negative").WithDetails("field", "offset")
	case q.MinTools < 0:
		return fault.Errorf(fault.CodeInvalid, "min_tools must not be negative").WithDetails("field", "min_tools")
	case !search.ValidTerms(q.Search):
		return fault.Errorf(fault.CodeInvalid, "search terms are not words (search.Terms)").WithDetails("field", "q")
	case q.Status != "" && !q.Status.Valid():
		return fault.Errorf(fault.CodeInvalid, "status %q is not succeeded or failed", q.Status).WithDetails("field", "status")
	case q.Bounded && (len(q.Tools) == 0 || q.Limit == 0 || !q.SkipTotal || len(q.Causes) > 0 || len(q.Search) > 0):
		return fault.Errorf(fault.CodeInvalid, "a bounded find needs tools, a limit and no total, and takes no causes or search").WithDetails("field", "bounded")
	}
	return nil
}

// Summarised reports whether q filters on the Class (status, min tools,
// read-only, exposed).
func (q *Query) Summarised() bool {
	return q.Status != "" || q.MinTools > 0 || q.ReadOnly != nil || q.Exposed != nil
}

// Match reports whether a procedure of Class c passes q's summary filters:
// the one implementation stores call (per procedure, or per class to sum
// their maintained counts).
func (q *Query) Match(c Class) bool {
	switch {
	case q.Status != "" && c.Status != q.Status:
		return false
	case c.Tools < q.MinTools:
		return false
	case q.ReadOnly != nil && *q.ReadOnly != c.ReadOnly:
		return false
	case q.Exposed != nil && *q.Exposed != c.exposed(q.AllowMutating):
		return false
	}
	return true
}

// findWalkFactor is how many rank entries per place of the page a
// tool-filtered Find walks at most (FindWalk).
const findWalkFactor = 16

// FindWalk is the one bound of a store's walk of its rank index for a
// page filtered by tools: a store that walks the index in order, testing
// each procedure, reads at most this many entries (findWalkFactor per place
// up to the page's end; no limit: unbounded), or, where a walked entry
// costs a fraction of a caller read, as many as the rarest tool's callers
// cost (the embedded store's walkPerCaller). If the page is not full by
// then, the matches are sparse (tools that are each common but rarely
// together, a selective class filter) and the store takes the callers of
// the rarest tool instead, so a page reads at most FindWalk entries plus
// that tool's callers, however many procedures there are; when the walk
// fills the page it is as cheap as before. Without tools there are no
// callers to take instead: unbounded.
func (q *Query) FindWalk() int {
	if q.Limit == 0 || len(q.Tools) == 0 {
		return math.MaxInt
	}
	end := q.Offset + q.Limit
	if end < q.Offset || end > math.MaxInt/findWalkFactor {
		return math.MaxInt
	}
	return end * findWalkFactor
}

// BoundedCallers is the most callers of its rarest tool a Bounded page
// reads instead of walking the rank index: a caller costs two index reads
// (its rank key, then its rank entry) where a walked entry costs one, so
// either way a Bounded page reads at most FindWalk entries.
func (q *Query) BoundedCallers() int {
	return q.FindWalk() / 2
}
