// Package dump is procgraph's dump: how a store's knowledge moves between
// stores and machines (procgraph export, import, import --merge, GET
// /v1/export, the audit archives). docs/dumps.md is the reference,
// docs/design.md "Dumps, import, merge, backup" the rules.
//
// Where each part lives:
//   - dump.go: the format (Format, the record Types in section order, the
//     record structs) and Store, the interface both stores implement
//     (Dump, Load, MergeConflict, FinishLoad, the import marker).
//   - file.go: Writer and Reader, line-delimited JSON with a trailer that
//     counts the records and holds the SHA-256 of every byte before it;
//     Validate reads a whole dump.
//   - order.go: the order and reference check (each section strictly
//     increasing in its key, so a reordered or repeated line is found with
//     constant memory; an edge, a usage key or a current version refers
//     only to what came before).
//   - bounds.go: every field a record carries within the bound of the
//     same field in internal/fields (a dump brings in nothing the API would
//     not take), checked as each line is read.
//   - check.go and admit.go: a dump is data, not authority. check.go
//     refuses a record that asks to be trusted (code analysed again must
//     give its hash, signature and opacity; audit records pass
//     procedures.CheckAudit); admit.go is what a valid record may carry
//     into the target (turns never runnable, approvals within the target's
//     bounds, policies and grants unbound unless trusted).
//   - import.go: Import (validate all, then resumable batches; Merge) and
//     the audit record's note.
//   - export.go: Write, a whole dump of a Store.
//
// The package sits above procedures (its records hold procedures' types)
// and below the stores (graph/embedded and graph/neo4j implement Store),
// api (GET /v1/export) and cmd/procgraph; procedures never imports it.
package dump
