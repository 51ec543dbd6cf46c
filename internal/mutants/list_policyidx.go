package main

// Session policies read from memory: the gate's policy index, written
// through by this instance, trusted across instances while the store's
// authorization revision polled is unchanged (ADR 0050, ADR 0052). gate/policy-index-not-used replaces
// gate/policies-listed-before-grant: the session's policies listed before
// the grant is asked now come from the index, and Decide's grant row
// precedes its policy row, so that order no longer changes a store call
// or a decision (an equivalent mutant).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "gate/policy-index-no-ttl",
			Why:      "the policy index trusts what it read forever: a policy revoked on another instance goes on deciding this instance's turns, and one set there is never used here",
			Edits:    []Edit{{Dir: "gate", Files: "policyindex.go", Find: "; ok && epoch != 0 && e.epoch == epoch {", Replace: "; ok {"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyOfAnotherInstance"},
		},
		{
			Name:     "gate/policy-revoke-kept",
			Why:      "a revoke does not drop the session's indexed policies: a policy revoked on this instance goes on deciding its turns until the next poll of the authorization revision",
			Edits:    []Edit{{Dir: "gate", Files: "policies.go", Find: "\tdefer g.policies.forget(sessionID)\n", Replace: "\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyWritesApplyAtOnce"},
		},
		{
			Name:     "gate/policy-set-unseen",
			Why:      "setting a policy does not drop the session's indexed policies: the operator's auto_run is not used by the next turns on this instance, which are asked again",
			Edits:    []Edit{{Dir: "gate", Files: "policies.go", Find: "\tdefer g.policies.forget(p.SessionID)\n", Replace: "\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyWritesApplyAtOnce"},
		},
		{
			Name:     "gate/policy-read-overtaken-kept",
			Why:      "a read of a session's policies begun before this instance revoked one is kept: the revoked policy decides later turns",
			Edits:    []Edit{{Dir: "gate", Files: "policyindex.go", Find: "\tif x.seq == seq {\n", Replace: "\tif seq == seq {\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyReadOvertakenByRevoke"},
		},
		{
			Name:     "gate/policy-index-not-used",
			Why:      "every turn reads the session's policies from the store: a turn a policy or grant decides costs a store round trip",
			Edits:    []Edit{{Dir: "gate", Files: "policyindex.go", Find: "\tif e, ok := x.entries.Get(sessionID); ok && epoch != 0", Replace: "\tif e, ok := x.entries.Get(sessionID); false && ok && epoch != 0"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestPolicyCoverReadsNoStore", "TestGrantCoverReadsNoProcedure", "TestBindingChecksCostNoStoreCall"},
		},
	}...)
}
