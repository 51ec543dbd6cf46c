package replay

import (
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/sandbox"
)

// FailureClass is the class a run that failed with err failed under, ""
// when it succeeded (err nil): one of health.FailureClasses, which the
// health counts, or health.FailureInvalidArguments (a tool call's
// arguments refused at call time, or by the tool's server: JSON-RPC
// -32602), which it does not. A tool call that could not reach its server,
// or lost it before an answer, is upstream_unavailable;
// a call that ran out of time is timeout. A call or step
// budget spent is step_limit; a program's own error, or the sandbox's, is
// internal.
func FailureClass(err *sandbox.Error) string {
	if err == nil {
		return ""
	}
	switch err.Code {
	case sandbox.ToolFailed:
		return health.FailureToolError
	case sandbox.ToolRefused:
		return health.FailureToolRefused
	case sandbox.InvalidArguments:
		return health.FailureInvalidArguments
	case sandbox.Timeout:
		return health.FailureTimeout
	case sandbox.UpstreamUnavailable:
		return health.FailureUpstreamUnavailable
	case sandbox.StepLimit, sandbox.CallLimit:
		return health.FailureStepLimit
	case sandbox.MemoryLimit:
		return health.FailureMemoryLimit
	default:
		return health.FailureInternal
	}
}
