package main

// The mutants of issue 23 item 4 (MCP 2026-07-28: the stateless handler
// and the review's requestState, ADR 0028).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "mcpserve/review-state-mac-unchecked",
			Why:      "a requestState is taken without its MAC: a client names any turn and resolves it with its own answer",
			Edits:    []Edit{{Dir: "mcpserve", Find: "|| !hmac.Equal(mac, s.mac(payload))", Replace: "|| !hmac.Equal(mac, mac)"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestReviewStateBound", "TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/review-state-mac-unchecked-e2e",
			Why:      "the same, through the real server and the SDK's client (the unit test aside)",
			Edits:    []Edit{{Dir: "mcpserve", Find: "|| !hmac.Equal(mac, s.mac(payload))", Replace: "|| !hmac.Equal(mac, mac)"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/review-state-any-caller",
			Why:      "a requestState issued to one reviewer answers another's retry: the review is not bound to the token it was asked of",
			Edits:    []Edit{{Dir: "mcpserve", Find: "case c.Holder != holder:", Replace: "case false:"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestReviewStateBound", "TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/review-state-any-arguments",
			Why:      "a requestState answers a retry with other arguments than the call it was asked for",
			Edits:    []Edit{{Dir: "mcpserve", Find: "case c.Args != args:", Replace: "case false:"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestReviewStateBound", "TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/review-state-any-endpoint",
			Why:      "a requestState issued by one endpoint is taken by the other",
			Edits:    []Edit{{Dir: "mcpserve", Find: "case c.Phase != phase:", Replace: "case false:"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestReviewStateBound"},
		},
		{
			Name:     "mcpserve/review-state-no-deadline",
			Why:      "a requestState is taken past the turn's deadline",
			Edits:    []Edit{{Dir: "mcpserve", Find: "case !now.Before(expires):", Replace: "case false:"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestReviewStateBound"},
		},
		{
			Name:     "mcpserve/review-state-replayable",
			Why:      "a requestState answers more than once: a replayed answer is taken again",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if _, done := s.used[c.Nonce]; done {", Replace: "if _, done := s.used[c.Nonce]; done && false {"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestReviewStateBound", "TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/review-state-replayable-e2e",
			Why:      "the same, through the real server and the SDK's client (the unit test aside)",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if _, done := s.used[c.Nonce]; done {", Replace: "if _, done := s.used[c.Nonce]; done && false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/review-answer-on-a-session",
			Why:      "a 2025-11-25 session answers a review with a requestState (its review is elicitation; the retry path is for 2026-07-28 only)",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if !modernRequest(req) {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestMCPReviewRoundTripBound"},
		},
		{
			Name:     "mcpserve/listens-uncapped",
			Why:      "a stateless client's subscriptions/listen holds no slot of the session caps: it holds more open at once than a stateful client may",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if method != methodListen {", Replace: "if true {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestListensCountAsSessions"},
		},
		{
			Name:     "mcpserve/no-stateless-route",
			Why:      "2026-07-28 requests go to the stateful handler: every client falls back to 2025-11-25",
			Edits:    []Edit{{Dir: "mcpserve", Find: "return r.Header.Get(protocolVersionHeader) >= ModernRevision", Replace: "return false"}},
			Packages: []string{"./mcpserve", "./cmd/procgraph"},
			Tests:    []string{"TestListensCountAsSessions", "TestMCPServerInfoAndRevision"},
		},
		{
			Name:     "mcpserve/stateless-usage-key-shared",
			Why:      "every stateless proc__ call counts under one usage key, whoever holds the token",
			Edits:    []Edit{{Dir: "usage", Files: "usage.go", Find: `return "mcp:" + holder`, Replace: `return "mcp:"`}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestStatelessUsageKeyIsTheHolder"},
		},
	}...)
}
