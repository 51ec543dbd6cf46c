package reuse

// Suggestion is reuse before regenerate: an exposed procedure that already
// does what a block of code does, to call as its proc__ tool instead of
// sending the code again. It is advice only: nothing decided changes.
type Suggestion struct {
	// Tool is the proc__ tool to call.
	Tool string `json:"tool"`
	// Reason is SuggestSameSignature or SuggestCoveredBy.
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// The reasons of a Suggestion.
const (
	// SuggestSameSignature: the exposed procedure composes exactly the
	// code's tools.
	SuggestSameSignature = "same_signature"
	// SuggestCoveredBy: the exposed procedure composes every tool of the
	// code, and more.
	SuggestCoveredBy = "covered_by"
)
