// Package health holds how a version's runs went and the demotion rule:
// the Health record and its stored vector (HealthOf, Vector, HealthDelta),
// a Run and its failure classes (FailureClasses, CountsInHealth,
// CountsTowardDemotion, RunResults), the demotion streak's callers
// (CallerHash, SeveralCallers), and the rule itself (DemotedAfter,
// StreakReset, DemoteParamsOf for a store that cannot run Go). It is a
// leaf below procedures, whose Service and stores count runs with it.
package health
