package main

// The mutants of issue 33's calls to MCP upstreams and the failure classes
// that say whose fault a failure was (docs/design.md "Calls to an MCP
// upstream").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "calls/timeout-classed-tool-error",
			Why:      "a call that ran out of its own time is classed tool_error: the server's slowness reads as the tool's failure",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "call.go", Find: "return &sandbox.CallFailure{Code: sandbox.Timeout,", Replace: "return &sandbox.CallFailure{Code: sandbox.ToolFailed,"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestCallClasses", "TestCallTimeout", "TestTimeoutsFailNoOtherCall"},
		},
		{
			Name:     "calls/unavailable-classed-tool-error",
			Why:      "a call that could not reach its server, or lost it, is classed tool_error: an outage reads as the procedure's failure",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "call.go", Find: "return &sandbox.CallFailure{Code: sandbox.UpstreamUnavailable,", Replace: "return &sandbox.CallFailure{Code: sandbox.ToolFailed,"}},
			Packages: []string{"./mcpdispatch", "./cmd/procgraph"},
			Tests:    []string{"TestCallClasses", "TestUpstreamKilledMidCall", "TestUpstreamFailureClassesThroughMain"},
		},
		{
			Name:     "calls/slow-call-blocks-the-next",
			Why:      "the calls of a server go one at a time whatever its max_concurrency: a slow call holds every other call of the server behind it",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "dispatcher.go", Find: "d.slots = make(chan struct{}, opts.MaxConcurrency)", Replace: "d.slots = make(chan struct{}, 1)"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestNoHeadOfLineBlocking/http"},
		},
		{
			Name:     "calls/protocol-fallback-skipped",
			Why:      "a server that refuses the revision offered is not offered the older ones: a server that speaks only an older revision never connects",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "dispatcher.go", Find: "if !refusedRevision(err) || ctx.Err() != nil {", Replace: "if true {"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestProtocolFallback"},
		},
		{
			Name:     "calls/http-unreachable-classed-tool-error",
			Why:      "an --upstream-http tool server that cannot be reached is classed tool_error: an outage reads as the procedure's failure",
			Edits:    []Edit{{Dir: "replay", Files: "dispatch_http.go", Find: "return &sandbox.CallFailure{Code: sandbox.UpstreamUnavailable, Message: fmt.Sprintf(\"tool %s: upstream unreachable\", tool)}", Replace: "return &sandbox.CallFailure{Code: sandbox.ToolFailed, Message: fmt.Sprintf(\"tool %s: upstream unreachable\", tool)}"}},
			Packages: []string{"./replay", "./cmd/procgraph"},
			Tests:    []string{"TestHTTPDispatcherUnreachable", "TestHTTPUpstreamUnreachableThroughMain"},
		},
	}...)
}
