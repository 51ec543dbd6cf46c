// Package audit holds the audit log's vocabulary: the Decision record and
// its kinds, outcomes, phases and reason words, decision ids, the
// DecisionFilter a log is read through, a store load's record
// (StoreDecision) and the decision a refusal carries (DecisionOf). It is a
// leaf below procedures, which records decisions (its Recorder and audit
// rule) and whose Store keeps them; every package that reads or writes the
// log imports it.
package audit
