// Appends one audit record (Store.AppendDecision); see the fragment.
#include decision_append
;
