package main

// The mutants of issue 24's MCP refresh (ADR 0035): tools compared field
// by field, Run's refreshes spaced, one read of the list per change
// shared by the handlers.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "mcpserve/same-tool-skips-a-field",
			Why:      "a tool whose icons changed is taken for the one offered: the client keeps the old one",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "&& reflect.DeepEqual(a.Icons, b.Icons)", Replace: ""}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestSameToolIsDeepEqual"},
		},
		{
			Name:     "mcpserve/same-map-nil-is-empty",
			Why:      "a schema's null object is taken for an empty one: a client keeps a tool whose JSON changed",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "	if (a == nil) != (b == nil) || len(a) != len(b) {", Replace: "	if len(a) != len(b) {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestSameValueIsDeepEqual"},
		},
		{
			Name:     "mcpserve/same-value-pointer-shallow",
			Why:      "two reads' success rates are compared by pointer: every refresh replaces every tool with a rate",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "ok && (x == y || x != nil && y != nil && *x == *y)", Replace: "ok && x == y"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestSameValueIsDeepEqual"},
		},
		{
			Name:     "mcpserve/same-tool-never",
			Why:      "every refresh replaces every tool: each change notifies every client and rebuilds 500 tools",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "ok && (old == t || sameTool(old, t)) {", Replace: "ok && false {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestListChanged"},
		},
		{
			Name:     "mcpserve/exposed-keeps-a-changed-tool",
			Why:      "the shared read takes the previous read's tools for a changed one: the clients keep the old tool",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "old != nil && sameTool(old, t) {", Replace: "old != nil {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestSharedReadKeepsUnchangedTools"},
		},
		{
			Name:     "mcpserve/run-not-spaced",
			Why:      "Run rereads the list after every change of a burst (the CPU of issue 24)",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "if wait <= 0 {", Replace: "if true {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestRunSpacesRefreshes"},
		},
		{
			Name:     "mcpserve/run-takes-changes-before-waiting",
			Why:      "Run takes the waiting changes before its spacing: a request in the meantime finds none and answers the stale list",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "		if !h.spaced(ctx, sub) {", Replace: "		sub.Take()\n		if !h.spaced(ctx, sub) {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestRequestRefreshesWhileRunWaits"},
		},
		{
			Name:     "mcpserve/exposed-not-shared",
			Why:      "each handler reads the exposed list on each change: two reads of up to 500 procedures where one does",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "if !force && e.last != nil && e.last.limit == limit && e.last.seq >= seq {", Replace: "if false {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestHandlersShareOneRead"},
		},
		{
			Name:     "mcpserve/exposed-stale",
			Why:      "the shared read is served after a change it does not hold: a client does not see its write",
			Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "e.last.limit == limit && e.last.seq >= seq {", Replace: "e.last.limit == limit {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestHandlersShareOneRead", "TestToolsFollowCommittedWrites"},
		},
	}...)
}

// The embedded indexer's linger (50 ms, issue 24): a waiting search and
// Close end it at once.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "embedded/search-waits-out-the-linger",
			Why:      "a search right after a capture waits for the indexer's linger to run out (50 ms per read-your-writes search)",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "indexer.go", Find: "		si.waiting++\n		defer func() { si.mu.Lock(); si.waiting--; si.mu.Unlock() }()\n		signal(si.urgent)", Replace: "		si.waiting++\n		defer func() { si.mu.Lock(); si.waiting--; si.mu.Unlock() }()"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestWaitersEndTheLinger"},
		},
		{
			Name:     "embedded/close-waits-out-the-linger",
			Why:      "Close waits for the indexer's linger to run out",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "indexer.go", Find: "	si.closing = true\n	si.mu.Unlock()\n	signal(si.urgent)", Replace: "	si.closing = true\n	si.mu.Unlock()"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestWaitersEndTheLinger"},
		},
	}...)
}

// A turn's approval changes no tool (issue 24).
func init() {
	mutants = append(mutants, Mutant{
		Name:     "mcpserve/approvals-refresh",
		Why:      "every turn that waits for an operator rereads the exposed list on both endpoints",
		Edits:    []Edit{{Dir: "mcpserve", Files: "refresh.go", Find: "return c.Kind != changes.ChangeApproval", Replace: "return true"}},
		Packages: []string{"./mcpserve"},
		Tests:    []string{"TestApprovalsDoNotRefresh"},
	})
}
