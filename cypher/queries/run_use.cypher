// What a run left (Store.RecordRun) in one statement: its audit records
// (the run_audit fragment), then its first use (use_body; nulls when its
// procedure or version does not exist: that use writes nothing).
#include run_audit
OPTIONAL CALL {
#include use_body
}
RETURN conflicts, results, counted, wasDemoted, procedure;
