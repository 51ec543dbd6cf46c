package main

import (
	"context"
	"fmt"
	"time"
)

// cmdAuditPrune exports the whole store, then deletes the audit records
// older than --before: the audit log is kept forever unless an operator
// runs this.
func cmdAuditPrune(ctx context.Context, args []string, s stdio) int {
	cl := newCmdline("audit prune", "audit prune --before DATE -o ARCHIVE [--store embedded|neo4j] [--data FILE]",
		"Export the whole store to ARCHIVE, then delete the audit records older than DATE (YYYY-MM-DD or RFC 3339); nothing is pruned otherwise.", false)
	open := storeFlags(cl)
	out := cl.fs.String("o", "", "the archive: a full dump written first (required)")
	before := cl.fs.String("before", "", "prune records older than this (required)")
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	if *out == "" || *before == "" {
		return cl.fail(s, "--before and -o are required (the store is exported before anything is pruned)")
	}
	cut, err := time.Parse(time.RFC3339, *before)
	if err != nil {
		if cut, err = time.Parse(time.DateOnly, *before); err != nil {
			return cl.fail(s, fmt.Sprintf("--before %q is not YYYY-MM-DD or RFC 3339", *before))
		}
	}
	st, _, err := open(ctx)
	if err != nil {
		return fail(s.err, "audit prune", err)
	}
	defer st.Close()
	n, err := exportThenPrune(ctx, st, *out, cut)
	if err != nil {
		return fail(s.err, "audit prune", err)
	}
	fmt.Fprintf(s.out, "exported the store to %s, then pruned %d audit records older than %s\n", *out, n, cut.UTC().Format(time.RFC3339))
	return 0
}
