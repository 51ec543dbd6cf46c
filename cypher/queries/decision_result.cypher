// Records $result as the result of the run the decision $id allowed
// (Store.SetDecisionResult); see the fragment. Returns found and result.
UNWIND [{id: $id, result: $result}] AS res
#include decision_result_set
RETURN found, result;
