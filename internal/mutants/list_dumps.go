package main

// The mutants of issue 19 item 4: a dump is data, not authority (docs/design.md).
func init() {
	cmd := []string{"./cmd/procgraph"}
	mutants = append(mutants, []Mutant{
		{
			Name:     "dumps/version-hash-unchecked",
			Why:      "an imported version's code is not required to give its code_hash (a read-only procedure's hash over code calling kill_job)",
			Edits:    []Edit{{Dir: "dump", Find: "if a.CodeHash != hash {", Replace: "if false {"}},
			Packages: []string{"./dump", "./graph/embedded"},
			Tests:    []string{"TestHostileDumpsRefused", "TestDumpRefusals"},
		},
		{
			Name:     "dumps/version-signature-unchecked",
			Why:      "an imported version's code may call tools its procedure's signature lacks (shown read-only beside code calling kill_job)",
			Edits:    []Edit{{Dir: "dump", Find: "case !slices.Equal(a.Signature, r.Group.Signature):", Replace: "case false:"}},
			Packages: append([]string{"./dump"}, cmd...),
			Tests:    []string{"TestHostileDumpsRefused", "TestHostileDumps"},
		},
		{
			Name:     "dumps/version-opaque-unchecked",
			Why:      "an imported opaque version may say it is not (and be exposed)",
			Edits:    []Edit{{Dir: "dump", Find: "case a.Opaque != v.Opaque:", Replace: "case false:"}},
			Packages: []string{"./dump", "./graph/embedded"},
			Tests:    []string{"TestHostileDumpsRefused", "TestDumpRefusals"},
		},
		{
			Name:     "dumps/turn-signature-unchecked",
			Why:      "an imported pending turn's code may call tools its shown signature lacks",
			Edits:    []Edit{{Dir: "dump", Find: "case !slices.Equal(a.Signature, t.Signature):", Replace: "case false:"}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps/refused:_a_turn_whose_code_is_not_its_signature"},
		},
		{
			Name:     "dumps/turn-opaque-unchecked",
			Why:      "an imported pending turn's opaque code may say it is not",
			Edits:    []Edit{{Dir: "dump", Find: "case a.Opaque != t.Opaque:", Replace: "case false:"}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps/refused:_a_turn_whose_code_is_opaque,_marked_plain"},
		},
		{
			Name:     "dumps/decision-bounds-unchecked",
			Why:      "an imported audit record skips the recorder's bounds (a 60 MB note in every GET /v1/decisions)",
			Edits:    []Edit{{Dir: "dump", Find: "CheckAudit(*r.Decision); err != nil {", Replace: "CheckAudit(*r.Decision); false && err != nil {"}},
			Packages: []string{"./dump", "./graph/embedded"},
			Tests:    []string{"TestHostileDumpsRefused", "TestDumpRefusals"},
		},
		{
			Name:     "dumps/approved-turn-runnable",
			Why:      "an imported approved turn stays approved: its requester runs kill_job nobody on the target approved",
			Edits:    []Edit{{Dir: "dump", Find: "TurnApproved: t.Status =", Replace: "TurnApproved: _ ="}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps/no_imported_turn_runs"},
		},
		{
			Name:     "dumps/running-turn-kept",
			Why:      "an imported running turn stays running (with its code and arguments)",
			Edits:    []Edit{{Dir: "dump", Find: "TurnRunning: t.Status =", Replace: "TurnRunning: _ ="}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps"},
		},
		{
			Name:     "dumps/deadline-unbounded",
			Why:      "an imported pending approval keeps its deadline (2099: a Retry-After of 72 years)",
			Edits:    []Edit{{Dir: "dump", Find: "t.Deadline.After(lim) {", Replace: "false && t.Deadline.After(lim) {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpAdmission"},
		},
		{
			Name:     "dumps/pending-bound-ignored",
			Why:      "an import admits pending approvals past the pending bound",
			Edits:    []Edit{{Dir: "dump", Find: "!t.Live(a.now) || a.bounds.Admit(", Replace: "!t.Live(a.now) || false && a.bounds.Admit("}},
			Packages: append([]string{"./graph/embedded"}, cmd...),
			Tests:    []string{"TestDumpAdmission", "TestHostileDumps"},
		},
		{
			Name:     "dumps/per-requester-bound-ignored",
			Why:      "an import lets one requester's pending approvals fill the whole bound (the per-requester bound not counted)",
			Edits:    []Edit{{Dir: "dump", Find: "a.per[t.RequestedBy]++", Replace: ""}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps/the_pending_bound_and_the_approval_timeout_hold"},
		},
		{
			Name:     "dumps/policy-kept-untrusted",
			Why:      "an imported session policy keeps its binding (in force) without --trust-authorizations",
			Edits:    []Edit{{Dir: "dump", Find: "c.Binding = nil", Replace: ""}},
			Packages: append([]string{"./graph/embedded"}, cmd...),
			Tests:    []string{"TestDumpAdmission", "TestHostileDumps"},
		},
		{
			Name:     "dumps/grant-kept-untrusted",
			Why:      "an imported durable grant keeps its binding (in force) without --trust-authorizations",
			Edits:    []Edit{{Dir: "dump", Find: "g.Binding = nil", Replace: ""}},
			Packages: append([]string{"./graph/embedded"}, cmd...),
			Tests:    []string{"TestDumpAdmission", "TestHostileDumps"},
		},
		{
			Name:     "dumps/trust-unaudited",
			Why:      "an import that trusted the dump's authorizations leaves no record saying who trusted them",
			Edits:    []Edit{{Dir: "dump", Find: "if !opts.TrustAuthorizations { return flush(last, done) }", Replace: "if true { return flush(last, done) }"}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps/a_real_policy_and_grant,_trusted_true"},
		},
		{
			Name:     "dumps/allowed-tools-null",
			Why:      "export writes allowed_tools [] as null: the moved store answers GET /v1/decisions differently",
			Edits:    []Edit{{Dir: "dump", Find: "c.At = c.At.UTC() // allowed_tools", Replace: "c.AllowedTools, c.At = nilIfEmpty(c.AllowedTools), c.At.UTC() //"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestDumpRoundTrip"},
		},
		{
			Name:     "dumps/serve-marked-store",
			Why:      "serve serves a store whose import did not complete (no recomputed classifications, a wrong rank index)",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "if err := refuseUnfinishedImport(ctx, store, cfg, \"it is not served\"); err != nil {", Replace: "if err := refuseUnfinishedImport(ctx, store, cfg, \"it is not served\"); false && err != nil {"}},
			Packages: cmd,
			Tests:    []string{"TestServeRefusesUnfinishedImport"},
		},
		{
			Name:     "dumps/refused-import-leaves-file",
			Why:      "a refused import leaves the (empty) store file it created behind",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: `if path := created(); path != "" {`, Replace: `if path := created(); false && path != "" {`}},
			Packages: cmd,
			Tests:    []string{"TestHostileDumps/refused:_a_version_whose_code_calls_another_signature"},
		},
	}...)
}
