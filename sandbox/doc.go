// Package sandbox runs procedure blocks: Starlark with limits, a `tools`
// object whose calls are checked against an allow-set at call time, and
// worker processes that keep a runaway block from taking the server down.
//
// # Runs
//
// A Request holds a block (see internal/blocksyntax), its arguments (bound as
// predeclared globals), the allow-set and Limits. A Runner runs it and
// returns a Result: the block's value converted to JSON-safe Go values, the
// captured print output, every tool call asked for, and an *Error if the
// run failed. Each run gets a fresh Starlark thread and globals; compiled
// programs (immutable) are cached by source and predeclared names.
// `load` is not available.
//
// # Tools
//
// `tools.X` is a callable bound to X for any X: the lookup never fails and
// reveals nothing (dir(tools) is empty). Calling it goes to the gate, which
// lives in the parent process: a name outside the allow-set fails the run
// with tool_refused and never reaches the ToolCaller; more than MaxCalls
// calls fail it with call_limit; arguments the request's Check refuses
// (the tool's input_schema) fail it with invalid_arguments, and the call
// never reaches the ToolCaller either. Aliases, getattr, lambdas, passing tools
// around: all end at the same gate. Calls take keyword arguments only. A
// failed call ends the run (Starlark has no try). Every call is recorded in
// Result.Calls, refused ones as not ok.
//
// # Values
//
// Starlark to JSON: None, bool, int, float, string, list and tuple (to
// []any) and dict with string keys (to map[string]any). An int that does
// not fit in int64, a NaN or infinite float, a non-string dict key, a value
// nested deeper than 100 levels (or cyclic) and every other type (set,
// function, bytes...) is a runtime_error naming the type. JSON to
// Starlark: the same types back; objects become dicts with sorted keys, so
// replays iterate deterministically. ToolCaller results that are not
// JSON-safe Go values (structs, []string, int...) are normalised through
// encoding/json; integers beyond int64 become floats. Across the worker
// boundary floats stay floats (2.0 is written "2.0").
//
// # Limits
//
// MaxSteps (step_limit), Timeout and context cancellation (timeout: the
// thread is cancelled and the tool call in flight gets a cancelled
// context; a run whose context is done before it starts does not start),
// MaxCalls (call_limit), MaxResult (runtime_error naming both
// sizes). Print output over MaxOutput is truncated, not an error: the kept
// part ends on a UTF-8 boundary and is followed by OutputTruncated.
// Panics are recovered as a generic runtime_error; a panicking ToolCaller
// gives runtime_error naming the tool.
//
// # Workers and the memory limit
//
// starlark-go has no memory limit and a Go process that runs out of memory
// dies with an unrecoverable fatal error. A Pool therefore runs each request
// in a worker process: this binary re-executed with WorkerEnv=1 (see
// IsWorker, RunWorker, ExitIfWorker), speaking length-prefixed frames over
// its stdin and stdout (see protocol.go). The worker only asks for calls;
// the parent checks and dispatches them. A worker that crashes, runs out of
// memory, hangs past Timeout plus PoolConfig.Grace, or breaks the protocol is
// killed (SIGKILL to its process group) and replaced; the run fails with
// memory_limit (the Go runtime's "out of memory" on the worker's stderr),
// timeout or runtime_error, and the parent lives on. Healthy workers are
// reused; Size are kept warm, up to MaxWorkers run at once.
//
// The hard limit is RLIMIT_AS, set by the parent with prlimit(2) on the idle
// worker before it is given any code, at the worker's idle virtual size
// (VmSize, about 5.5 GB: Go reserves address space up front) plus MaxMemory
// plus 128 MiB of headroom; the worker also sets debug.SetMemoryLimit to
// MaxMemory so the GC works before the wall. Measured on linux/amd64 with Go
// 1.26 and MaxMemory 256 MiB: the doubling bomb dies in 0.3-0.7 s with the
// runtime's out-of-memory error, every time (30/30 through a Pool); a run
// holding 300 MB of live strings completes. Alternatives measured: RLIMIT_AS at MaxMemory
// alone stops the runtime from starting; RLIMIT_DATA at 256 MiB works for
// normal runs but the bomb then sometimes crashes the Green Tea GC with a
// SIGSEGV instead of an out-of-memory error (2 in 7), which could not be
// told from other crashes; cgroups are not writable here. Workers get
// MALLOC_ARENA_MAX=1 (in a cgo binary glibc otherwise reserves 64 MiB of
// address space per thread) and GOMAXPROCS=1 (a run is one thread; it also
// makes hand-offs cheaper), and a worker whose Go-mapped memory grew by more
// than MaxMemory/4 is replaced after its run, so every run starts with the
// same room. A request whose Limits.MaxMemory differs from the pool's gets
// a one-off worker with its own limit. NewInProcess enforces everything but
// memory.
//
// A worker that dies while idle (killed from outside, crashed) is noticed
// at once through its wait status, not when it is next handed a run: it
// leaves the idle list, counts as crashed (PoolStats), and the warm pool is
// refilled. PoolStats' Started, Crashed and Killed only grow.
//
// # Memory crossing into the server
//
// A tool call's arguments travel from the worker to the server, and its
// result back; both are bounded per call (PoolConfig.MaxCallBytes) and in
// total across every run of every pool sharing a Budget. The server looks
// at a call frame's header before reading it: arguments over the bound,
// or not fitting the budget, are skipped unread (the worker stays
// healthy) and fail the run with runtime_error naming the tool; a result
// over the bound or not fitting fails it with tool_failed. The budget
// reserves several copies of each call's bytes (ArgsCopies: the frame, the
// decoded value, the dispatcher's request) for as long as the call is in
// flight. A call the worker cannot frame at all (a tool name over 65535
// bytes, a frame over 64 MiB) fails the run with runtime_error in the
// worker. The block's own result is bounded by Limits.MaxResult. The
// in-process Runner has neither bound (tests and benchmarks only).
//
// # Admission
//
// Admission is the bounded queue in front of the workers (docs/design.md
// "Admission and deadlines"): Slots requests run at once, Queue may wait in
// FIFO order, PerKey caps one key (a token holder); a request is refused at
// once with *Busy when the queue is full, its key at its cap, or the
// expected wait (from the recent time a slot is held) passes its context's
// deadline, and a waiting request whose deadline passes is refused the same
// way. Pool.Run gives a run only what is left of its context's deadline, so
// the time spent waiting counts against it.
//
// A worker's stderr keeps a bounded tail, used only to classify its death;
// logs (PoolConfig.Logger) carry pids, exit statuses and error codes, never
// code, arguments or output.
package sandbox
