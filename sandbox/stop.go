package sandbox

import (
	"errors"

	"go.starlark.net/starlark"
)

// Stopped is the code of a run its ToolCaller stopped at a call, before
// making it (replay's review at the call: the run pauses before a
// state-changing call). The ToolCaller returns an *Error of this code; the
// run ends as at any failed call, and its Error keeps the line of the
// program the call was made on (Error.Line). A stopped run is never a
// run's answer: the ToolCaller that stopped it says what it was.
const Stopped ErrorCode = "stopped"

// stoppedAt returns the run's fatal error, with, when it is a stop, the
// line of the innermost frame of the program in err (the Starlark error
// the stop ended the run with): the line of the stopped call. Any other
// error is returned as it is.
func stoppedAt(fatal *Error, err error) *Error {
	if fatal.Code != Stopped {
		return fatal
	}
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return fatal
	}
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		fr := ee.CallStack[i]
		if fr.Pos.IsValid() && fr.Pos.Filename() != "<builtin>" {
			c := *fatal
			c.Line = int(fr.Pos.Line)
			return &c
		}
	}
	return fatal
}

// stopLine is the gate's failure with, when it is a stop and the run
// reported the same stop, the line the run reported (stoppedAt): the
// parent knows the call, the run where in the program it was made. The
// line is only shown, never trusted for a decision.
func stopLine(failed, reported *Error) *Error {
	if failed.Code != Stopped || reported == nil || reported.Code != Stopped || reported.Tool != failed.Tool || reported.Line <= 0 {
		return failed
	}
	c := *failed
	c.Line = reported.Line
	return &c
}
