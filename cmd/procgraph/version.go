package main

import (
	"context"
	"fmt"

	"github.com/procgraph/procgraph/internal/buildinfo"
)

// cmdVersion prints this build's release and VCS stamp (buildinfo): one
// line, or with --json the fields.
func cmdVersion(_ context.Context, args []string, s stdio) int {
	cl := newCmdline("version", "version [--json]", "This build's release (the module version the toolchain stamped, \"devel\" for a build from a work tree) and its VCS stamp (commit, time, modified).", true)
	if _, code, done := cl.parse(args, 0, 0, s); done {
		return code
	}
	in := buildinfo.Read()
	if cl.asJSON() {
		printJSON(s.out, in)
		return 0
	}
	fmt.Fprintln(s.out, in.String())
	return 0
}
