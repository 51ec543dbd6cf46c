package main

// The mutants of issue 19 item 5 (scopes and bounds on every path).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "e2e/turn-capture-without-capture-scope",
			Why:      "a turn's capture is honoured for an invoke-only token: it creates an exposed procedure with planner-visible text",
			Edits:    []Edit{{Dir: "gate", Find: "if req.Capture != nil && !req.MayCapture {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTurnCaptureNeedsCaptureScope"},
		},
		{
			Name:     "e2e/pending-per-requester-ignored",
			Why:      "the pending bound is global only: one token fills it and starves every other agent",
			Edits:    []Edit{{Dir: "gate", Find: "b.PerRequester > 0 && b.PerRequester < b.Total && c.Requester >= b.PerRequester", Replace: "false"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTurnPendingPerRequester"},
		},
		{
			Name:     "graph/embedded/pending-requester-uncounted",
			Why:      "the embedded store counts no turn as the requester's: the per-requester bound never binds",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if by == r.RequestedBy {", Replace: "if by == \"\" && by != \"\" {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Turns/one_requester's_pending_approvals_are_bounded_apart_from_the_total"},
		},
		{
			Name:     "e2e/long-polls-unbounded",
			Why:      "long polls (wait_s, await_approval) are held without bound: thousands of waiters from one token hold the server's goroutines",
			Edits:    []Edit{{Dir: "gate", Find: "if g.held.Add(1) > int64(g.opts.MaxWaiters) {", Replace: "if g.held.Add(1) > 1<<40 {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestLongPollsBounded"},
		},
		{
			Name:     "e2e/turn-wait-takes-no-place",
			Why:      "a POST /v1/turns with wait_s waits without taking a long poll's place",
			Edits:    []Edit{{Dir: "gate", Find: "r, err := g.holdWaiter()", Replace: "r, err := func() {}, error(nil)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestLongPollsBounded"},
		},
		{
			Name:     "e2e/searches-unbounded",
			Why:      "q searches run without bound: thousands at once take the server's memory",
			Edits:    []Edit{{Dir: "procedures", Find: "if q.Search != nil {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestSearchesBounded"},
		},
		{
			Name:     "e2e/policy-set-without-session",
			Why:      "a policy_set record does not say which session's policy was set",
			Edits:    []Edit{{Dir: "gate", Find: "CodeHash: p.CodeHash, Session: p.SessionID,", Replace: "CodeHash: p.CodeHash,"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestPolicyAuditSaysWhoWhatWhich"},
		},
		{
			Name:     "e2e/policy-revoked-without-hash",
			Why:      "revoking policies records one record without code hash: the audit cannot say which policies went",
			Edits:    []Edit{{Dir: "gate", Find: "if len(hashes) > 0 {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestPolicyAuditSaysWhoWhatWhich"},
		},
		{
			Name:     "procedures/audit-session-unchecked",
			Why:      "the session of an audit record is not held to a session id's shape: a line break or a token could travel in it",
			Edits:    []Edit{{Dir: "procedures", Find: `if d.Session != "" && usage.CheckSessionID(d.Session) != nil {`, Replace: "if false && usage.CheckSessionID(d.Session) != nil {"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestRecorderEnforcesTheAuditRule"},
		},
		{
			Name:     "graph/embedded/pending-legacy-entry-nobodys",
			Why:      "a pending index entry from before the requester was kept counts for nobody: an upgraded store's per-requester bound is loose",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "return deadline, t.RequestedBy, nil", Replace: `return deadline, t.RequestedBy[:0], nil`}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestPendingEntryWithoutRequester"},
		},
		{
			Name:     "graph/neo4j/pending-requester-bound-dropped",
			Why:      "turn_create is given the total as the requester's bound: on Neo4j one token fills every place (needs NEO4J_URI)",
			Edits:    []Edit{{Dir: "graph/neo4j", Find: `params["max"], params["maxMine"], params["now"] = bounds.Total, perRequester,`, Replace: `params["max"], params["maxMine"], params["now"] = bounds.Total, bounds.Total,`}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestPendingBoundsCostNoStatement"},
		},
	}...)
}
