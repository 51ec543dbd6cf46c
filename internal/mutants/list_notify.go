package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "notify/unsigned",
			Why:      "webhook posts go out without their HMAC signature although a secret is configured: a receiver cannot tell procgraph's posts from anyone's",
			Edits:    []Edit{{Dir: "notify", Find: "if len(n.cfg.Secret) > 0 {", Replace: "if false {"}},
			Packages: []string{"./notify", "./cmd/procgraph"},
			Tests:    []string{"TestNotifySigned", "TestNotifyApprovals"},
		},
		{
			Name:     "notify/blocks-the-turn",
			Why:      "a full notification queue makes the caller wait: a receiver that never answers holds up every turn that waits for an operator",
			Edits:    []Edit{{Dir: "notify", Find: "case n.queue <- e:\n\tdefault:", Replace: "case n.queue <- e:\n\tcase <-time.After(time.Hour):"}},
			Packages: []string{"./notify"},
			Tests:    []string{"TestNotifyNeverBlocks"},
		},
		{
			Name:     "notify/no-expiry-event",
			Why:      "an approval that expired is not told: the operator never learns that the agent's block was dropped",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "notify.go", Find: "case gate.TurnExpired:\n\t\ttyp = notify.TypeExpired", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestNotifyApprovals"},
		},
	}...)
}
