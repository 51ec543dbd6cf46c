// Package gate is the turn gate (docs/design.md "The turn gate"): every
// block an agent asks to run (a turn: POST /v1/turns, MCP run_code) is
// prepared once by the replay pipeline (replay.Replayer.PrepareBlock; the
// one prepared-block type is replay.Block, kept by turn id through the
// turn's resolution and run and rechecked there: blocks.go), decided
// by the decision table, and then run at once with the Replayer's sandbox,
// admission and dispatcher, denied, or kept pending in the store's
// approvals until an operator resolves it (Gate.Resolve) and its requester
// runs it (Gate.Run). Every decision is recorded through the service's
// Recorder; a resolution and a run each happen at most once, across
// instances, by compare-and-set in the store (TransitionTurn); Sweeper
// expires turns past their deadlines and ends runs lost with their
// instance.
//
// Files: turns.go (the turn domain: Turn, TurnRecord, Choice,
// SessionPolicy, PendingBounds and the pending defaults, turn ids),
// turnstore.go (TurnStore, which both stores implement, and its rules:
// CheckApproval, CheckTransition, CheckPause, CheckPolicyMatches), gate.go (Submit, the
// long polls, the deadlines), resolve.go (Run, Resolve, Cancel, the approval
// queue), policies.go (the session policies: set, revoke, their state),
// policyindex.go (the session policies turns read, kept in memory),
// blocks.go (the prepared blocks kept for turns), covers.go (what an
// answer covers), atcall.go (the review at the call: a turn run up to its
// first state-changing call, stored paused, resumed once per pause),
// sweep.go (Sweeper).
//
// gate imports replay and procedures, never dump, a store, api, mcpserve or
// cmd: the stores and dump import gate for the turn types.
package gate
