package procedures

import (
	"errors"

	"github.com/procgraph/procgraph/fault"
)

// DecisionOf returns the decision err carries (see WithDecision), if any.
func DecisionOf(err error) (Decision, bool) {
	var e *fault.Error
	if !errors.As(err, &e) {
		return Decision{}, false
	}
	d, ok := e.Details[fault.DetailDecision].(Decision)
	return d, ok
}
