// The audit records of a run (Store.RecordRun), ahead of its use in the
// same statement: $decisions (the records stored with the run, each a map
// of decision_record's keys) appended, $results (each {id, result}: the
// results of records stored before the run) set. Leaves conflicts (the
// ids of records another record holds) and results (each result's id,
// found and result as now held): the caller rolls the transaction back
// on either's conflict.
CALL {
  UNWIND $decisions AS rec
#include decision_record
  RETURN collect(CASE WHEN NOT (created OR same) THEN rec.id END) AS conflicts
}
CALL {
  UNWIND $results AS res
#include decision_result_set
  RETURN collect({id: res.id, found: found, result: result}) AS results
}
