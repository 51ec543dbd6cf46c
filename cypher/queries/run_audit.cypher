// The audit records of a run without a use (Store.RecordRun); see the
// fragment.
#include run_audit
RETURN conflicts, results;
