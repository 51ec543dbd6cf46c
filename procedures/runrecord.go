package procedures

import (
	"slices"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
)

// DecisionResult is the result (one of RunResults) of the run the audit
// record ID allowed.
type DecisionResult struct {
	ID     string
	Result string
}

// RunRecord is what one run leaves — an invoke with the nested replays it
// led to, or a turn — committed by Store.RecordRun in one transaction
// after the run (docs/design.md "One commit per run"): the records of its
// decisions not stored yet, the results of those stored before it ran,
// and its uses.
type RunRecord struct {
	// Decisions are records stored with the run (their decision's verdict
	// did not need them durable first: decide.Verdict.DurableFirst), each with
	// its Result.
	Decisions []audit.Decision
	// Results are the results of records stored before their run.
	Results []DecisionResult
	// Uses are the run's uses, in order, each as Store.RecordUse counts
	// it; a use whose procedure or version is unknown writes nothing and
	// its UseResult has no Procedure.
	Uses []UseInput
}

// empty reports whether rr holds nothing to write.
func (rr *RunRecord) empty() bool {
	return len(rr.Decisions) == 0 && len(rr.Results) == 0 && len(rr.Uses) == 0
}

// CheckResults checks that every result of rr, and every deferred
// record's, is one of RunResults: fault.CodeInvalid otherwise.
func (rr *RunRecord) CheckResults() error {
	for _, r := range rr.Results {
		if !slices.Contains(health.RunResults, r.Result) {
			return fault.Errorf(fault.CodeInvalid, "result %q is not a run's result", r.Result).WithDetails("field", "result")
		}
	}
	for _, d := range rr.Decisions {
		if !slices.Contains(health.RunResults, d.Result) {
			return fault.Errorf(fault.CodeInvalid, "the record %s stored with its run has no run's result", d.ID).WithDetails("field", "result")
		}
	}
	return nil
}
