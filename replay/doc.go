// Package replay replays stored procedures: it recomputes whether a procedure
// is read-only from the current catalogue, takes exactly one recorded
// decision per invoke (decide.Decide, the table turns use too), derives the runtime allow-set (see
// AllowSet), runs the procedure's code in a sandbox.Runner whose tool calls
// go to a Dispatcher, replays nested proc__ calls recursively, and counts
// successful replays. Every block it runs or describes goes through one
// pipeline and is one type (Block: dialect, analysis, classification,
// typed schema, arguments), for an invoke, a turn of the gate package
// (PrepareBlock once at submit, Recheck at its resolution and run,
// RunBlock), `procgraph run` (RunFile) and `procgraph signature`
// (FileBlock). It also builds the planner's tool descriptors.
//
// The security boundary is the allow-set checked at call time: a refused call
// never reaches the Dispatcher. Static analysis only decides what to show.
//
// Nested proc__ calls run in the same kind of sandbox as their caller (by
// default the same Runner; see Options.NestedRunner): with a sandbox.Pool a
// nested replay takes a second worker process rather than running in the
// server process, keeping the memory isolation. Its wait for a worker is
// bounded by the caller's deadline, so an exhausted pool fails the nested
// call with timeout instead of deadlocking.
package replay
