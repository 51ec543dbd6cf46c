package main

// The mutants of issue 33's catalogue that follows the live servers
// (docs/design.md "Drift": the catalogue refresh, who wins, unknown_tool).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "mcpdispatch/new-tool-read-only-untrusted",
			Why:      "a tool a server starts listing takes its readOnlyHint though the server is not trusted: a new tool of any server runs unattended",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "import.go", Find: "if srv.TrustAnnotations && t.Annotations != nil {", Replace: "if t.Annotations != nil {"}},
			Packages: []string{"./mcpdispatch", "./cmd/procgraph"},
			Tests:    []string{"TestRefresherFollowsListChanged", "TestCatalogueFollowsTheLiveServers"},
		},
		{
			Name:     "procedures/refresh-keeps-a-changed-entry",
			Why:      "a tool whose schema changed on its server keeps its old entry: its procedures are not stale and their grants stay active",
			Edits:    []Edit{{Dir: "procedures", Files: "refresh.go", Find: "r.Changed = append(r.Changed, t.Name)\n\t\t\tt = l", Replace: "r.Changed = append(r.Changed, t.Name)"}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestRefreshCatalogueFollowsTheServer", "TestCatalogueFollowsTheLiveServers"},
		},
		{
			Name:     "mcpdispatch/list-changed-not-heard",
			Why:      "procgraph opens no stream for an HTTP server's notifications: a tool changed on the server keeps its approval until the next timed refresh",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "dispatcher.go", Find: "DisableStandaloneSSE: opts.OnToolsChanged == nil,", Replace: "DisableStandaloneSSE: true,"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestRefresherFollowsListChanged"},
		},
		{
			Name:     "procedures/refresh-overwrites-the-operators-entry",
			Why:      "a refresh replaces an entry the operator edited with what the server lists: a read_only the operator took away comes back",
			Edits:    []Edit{{Dir: "procedures", Files: "refresh.go", Find: "case !t.FollowsServer():", Replace: "case false:"}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestRefreshCatalogueKeepsTheOperatorsEntry", "TestCatalogueFollowsTheLiveServers"},
		},
		{
			Name: "procedures/refresh-writes-when-unchanged",
			Why:  "every refresh writes the catalogue and an audit record though nothing changed: a write per server every 5 minutes",
			Edits: []Edit{{Dir: "procedures", Files: "refresh.go", Find: "if !r.Changes() {\n\t\treturn r, nil\n\t}\n\tc, err := NewCatalogue(tools)", Replace: "c, err := NewCatalogue(tools)"},
				{Dir: "procedures", Files: "refresh.go", Find: "if c.Revision == stored.Revision {", Replace: "if false {"}},
			Packages: []string{"./procedures", "./mcpdispatch"},
			Tests:    []string{"TestRefreshCatalogueFollowsTheServer", "TestRefresherFollowsListChanged"},
		},
		{
			Name:     "procedures/unknown-tool-replay-runs",
			Why:      "a replay calling a tool its server no longer lists runs, and fails mid-run (or in the automatic phase is told it changes state) instead of unknown_tool",
			Edits:    []Edit{{Dir: "decide", Files: "decide.go", Find: "return len(in.UnknownTools) > 0", Replace: "return false"}},
			Packages: []string{"./replay", "./cmd/procgraph"},
			Tests:    []string{"TestInvokeCatalogueChangeReclassifies", "TestMethodValueOfExcludedToolRefused", "TestCatalogueFollowsTheLiveServers"},
		},
	}...)
}
