package procedures

// Validate checks q's ranges: the one check of a Query, for the service
// and every store. Returns CodeInvalid naming the field.
func (q *Query) Validate() error {
	switch {
	case q.Limit < 0 || q.Limit > MaxFindLimit:
		return Errorf(CodeInvalid, "limit must be between 1 and %d (0: no limit)", MaxFindLimit).WithDetails("field", "limit")
	case q.Offset < 0:
		return Errorf(CodeInvalid, "offset must not be negative").WithDetails("field", "offset")
	case q.MinTools < 0:
		return Errorf(CodeInvalid, "min_tools must not be negative").WithDetails("field", "min_tools")
	case !ValidTerms(q.Search):
		return Errorf(CodeInvalid, "search terms are not words (procedures.SearchTerms)").WithDetails("field", "q")
	case q.Status != "" && !q.Status.Valid():
		return Errorf(CodeInvalid, "status %q is not succeeded or failed", q.Status).WithDetails("field", "status")
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
	case q.Exposed != nil && *q.Exposed != c.Exposed(q.AllowMutating):
		return false
	}
	return true
}
