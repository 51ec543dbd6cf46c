// Package procedures is procgraph's domain core: procedures, versions,
// causes and the catalogue, the Store interface both stores implement
// (store.go), and the Service whose methods apply
// design.md's rules. Where each rule lives:
//   - capture and names: capture.go; find, views and the graph: find.go,
//     query.go, view.go, graph.go; the reuse suggestion: suggest.go (its
//     vocabulary is package reuse');
//   - classification (read-only, nesting problems): classify.go; exposure:
//     exposure.go; typed parameter schemas: typed.go (JSON Schema
//     itself is package schemas');
//   - grants, promotions, retirement: grants.go, current.go, retire.go; what
//     an authorization binds to is built in binding.go (the Binding and
//     its rule are package binding's; a session id's rule and the usage
//     key are package usage's);
//   - the service's side of turns and approvals (the decision table of
//     replays and turns is package decide's): turns_service.go (ClassifyBlock: what
//     the catalogue and store say of a block, Classified, which the one
//     prepared-block type, replay.Block, holds; the turn domain and its
//     TurnStore are package gate's);
//   - the audit rule and the Recorder: audit.go, recorder.go (the record
//     and its vocabulary are package audit's); a version's health and
//     the demotion rule are package health's;
//   - other instances' changes: remote.go (the change Feed is package
//     changes').
//
// What is not the domain lives beside it: the turn gate in package gate,
// search text and ranking in package search, the dump format and importer
// in package dump (which imports procedures; procedures never imports it),
// the error type in package fault. docs/architecture.md has the whole map.
package procedures
