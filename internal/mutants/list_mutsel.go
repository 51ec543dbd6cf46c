package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "drain/change-stream-holds-the-drain",
			Why:      "a GET /v1/changes stream (a console open) does not end when the server drains: every stop waits the whole shutdown grace (30 s) for it",
			Edits:    []Edit{{Dir: "api", Files: "changes.go", Find: "\t\tcase <-s.draining:\n\t\t\treturn nil\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestCloseEndsChangeStreams"},
		},
		{
			Name:     "drain/mcp-session-holds-the-drain",
			Why:      "an MCP session's notification stream (a 2025-11-25 client connected) does not end when the server drains: every stop waits the whole shutdown grace (30 s) for it",
			Edits:    []Edit{{Dir: "mcpserve", Files: "drain.go", Find: "\tfor ss := range h.server.Sessions() {\n\t\t_ = ss.Close()\n\t}\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPSessionsEndAtTheDrain"},
		},
		{
			Name:     "drain/mcp-listen-holds-the-drain",
			Why:      "a 2026-07-28 client's subscriptions/listen (one following list_changed) is not answered when the server drains: every stop waits the whole shutdown grace (30 s) for it",
			Edits:    []Edit{{Dir: "mcpserve", Files: "modern.go", Find: "\t\t\t\tcase <-h.cfg.Draining:\n\t\t\t\t\tcancel()\n", Replace: "\t\t\t\tcase <-h.cfg.Draining:\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPSessionsEndAtTheDrain"},
		},
		{
			Name:     "drain/mcp-sessions-closed-mid-call",
			Why:      "the drain closes the MCP sessions without waiting for the requests in flight: a proc__ call running when the stop begins loses its answer",
			Edits:    []Edit{{Dir: "mcpserve", Files: "drain.go", Find: "\tcase <-h.inflight.none():\n", Replace: "\tdefault:\n"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPSessionsEndAtTheDrain"},
		},
	}...)
}
