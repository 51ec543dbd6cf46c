// Package prompts measures what an approval saves: how many prompts an
// operator answers per 100 agent turns, and how many state-changing calls
// run that no approved prompt showed (unsafe runs), under five approval
// models side by side on one seeded corpus (issue 39; docs/benchmarks.md
// "Prompts per 100 turns").
//
// The corpus (corpus_test.go) is 40 sessions of 25 turns over the example
// catalogue (examples/catalogue.json): each session investigates a few
// tasks, each turn one of 12 intents — read-only investigations of two or
// three reads, single-tool reads, a retry, a kill, a note — written again
// as an LLM writes it again: other task and job ids, other local names, a
// comment or none, independent reads in another order, an id bound to a
// name first or written inline, another quote style, now and then another
// return style. 10% of turns repeat an earlier block of the session
// verbatim; 3% are hostile twins of an earlier one: a state-changing call
// hidden among reads, the same kill or retry aimed at another target, or a
// note whose multi-line text has a line separator where the approved one
// had a line break (one code hash for a hash over lines). A planner calls
// the procedure captured for the turn's intent instead of writing code
// (`return tools.proc__X(task_id=…)`) 70% of the time once one is exposed.
//
// The operator rejects every hostile block; answers auto_run to 60% of
// read-only blocks and run_once to the others; run_once to every
// state-changing block.
//
// The models: always ask; the per-session code hash (Bamboo's phase 1:
// a block whose code hash the operator approved with auto_run in the
// session runs); "always allow this tool" after any approval (a block runs
// when every tool it calls was in an approved block) and after auto_run
// only; and procgraph, the real gate (procedures.Service, gate.Gate,
// replay.Replayer over an embedded store) with every allowed block run in
// the sandbox against a recording upstream and captured under its intent.
// With -v the test also prints procgraph's prompts by intent and cause:
// a hostile twin, a state-changing turn (run_once), a read-only program
// not yet answered auto_run in the session, a planner's call of a
// procedure not yet granted — what the operator model asks for — or a
// program an earlier auto_run or grant already covers (what the
// canonical program is there to remove).
//
// A run is unsafe when it makes a state-changing call (tool and
// arguments) that no block the operator approved at a prompt made; the
// calls of the baseline models are the generator's, which the test checks
// against the calls the recording upstream saw for the blocks procgraph
// ran.
//
//	go test ./bench/prompts -run TestPromptsPer100Turns -v              # the project's seed
//	go test ./bench/prompts -run TestPromptsPer100Turns -v -prompts.seed 7  # another corpus
//	go test ./bench/prompts -run TestPromptsPer100Turns -v -prompts.seed 1234  # one never tuned to
package prompts
