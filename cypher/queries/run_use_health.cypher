// What a run left (Store.RecordRun) in one statement when its first use
// counts in the health only: its audit records (the run_audit fragment),
// then that use (use_health_body; nulls when its procedure or version
// does not exist: it writes nothing).
#include run_audit
OPTIONAL CALL {
#include use_health_body
}
RETURN conflicts, results, wasDemoted, procedure;
