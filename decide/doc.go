// Package decide holds the one decision table of replays and turns
// (docs/design.md "Authorization of a replay" and "The turn gate"): what a
// decision depends on (DecisionInput, which holds no code and no argument
// values), the table (Decide) and a turn's last rows (ResolveVerdict,
// ExpiredVerdict), and the Verdict with what it lets run and when its
// record is stored (Allowed, DurableFirst). It is pure: replay and gate
// gather its input and record its verdict.
package decide
