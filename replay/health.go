package replay

import (
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// FailureClass is the health class (procedures.FailureClasses) a run that
// failed with err counts under, "" when it succeeded (err nil). A call or
// step budget spent is step_limit; a program's own error, or the
// sandbox's, is internal.
func FailureClass(err *sandbox.Error) string {
	if err == nil {
		return ""
	}
	switch err.Code {
	case sandbox.ToolFailed:
		return procedures.FailureToolError
	case sandbox.ToolRefused:
		return procedures.FailureToolRefused
	case sandbox.Timeout:
		return procedures.FailureTimeout
	case sandbox.StepLimit, sandbox.CallLimit:
		return procedures.FailureStepLimit
	case sandbox.MemoryLimit:
		return procedures.FailureMemoryLimit
	default:
		return procedures.FailureInternal
	}
}
