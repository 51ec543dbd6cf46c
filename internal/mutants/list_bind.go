package main

// The mutants of issue 19 items 1 and 2 (what an authorization binds to).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "signature/line-separators-accepted",
			Why:      "a line separator outside a string is accepted: a comment hides a call from Starlark but not from code_hash, and a policy on the harmless block runs its twin",
			Edits:    []Edit{{Dir: "signature", Find: "if err := checkSeparators(code, toks); err != nil {", Replace: "if err := checkSeparators(code, toks); err != nil && false {"}},
			Packages: []string{"./signature", "./cmd/procgraph"},
			Tests:    []string{"TestLineSeparatorsRefused", "TestBindLineSeparatorTwins"},
		},
		{
			Name:     "signature/line-separators-in-comments-accepted",
			Why:      "a comment counts as a string literal: the separator that ends it for code_hash only is accepted",
			Edits:    []Edit{{Dir: "signature", Find: "toks[next].Kind != tokString || toks[next].End <= i", Replace: "toks[next].Kind != tokString && toks[next].Kind != tokComment || toks[next].End <= i"}},
			Packages: []string{"./signature", "./cmd/procgraph"},
			Tests:    []string{"TestLineSeparatorsRefused", "TestBindLineSeparatorTwins"},
		},
		{
			Name:     "signature/statement-hash-without-strings",
			Why:      "the statement hash leaves string literals out: triple-quoted twins that code_hash merges share it too",
			Edits:    []Edit{{Dir: "signature", Find: "case tokComment:\n\t\t\tcontinue\n\t\tcase tokNewline:", Replace: "case tokComment, tokString:\n\t\t\tcontinue\n\t\tcase tokNewline:"}},
			Packages: []string{"./signature", "./cmd/procgraph"},
			Tests:    []string{"TestStatementHash", "TestBindLineSeparatorTwins"},
		},
		{
			Name:     "procedures/binding-ignores-statement-hash",
			Why:      "an authorization matches on code_hash alone: a twin program with the same code_hash runs under it",
			Edits:    []Edit{{Dir: "procedures", Find: "b.StatementHash != cur.StatementHash ||", Replace: ""}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestAutoRunState", "TestBindLineSeparatorTwins"},
		},
		{
			Name:     "procedures/unbound-authorization-applies",
			Why:      "an authorization without a binding (stored before bindings, imported untrusted) applies (it must bind to nothing)",
			Edits:    []Edit{{Dir: "procedures", Find: "case b == nil || cur == nil:\n\t\treturn InactiveUnbound", Replace: "case b == nil:\n\t\treturn \"\"\n\tcase cur == nil:\n\t\treturn InactiveUnbound"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestAutoRunState"},
		},
		{
			Name:     "procedures/binding-ignores-nested",
			Why:      "a nested procedure captured or changed after review does not make the authorization inactive (issue 19 item 2b)",
			Edits:    []Edit{{Dir: "procedures", Find: "case !slices.EqualFunc(b.Nested, cur.Nested, BoundNested.equal):", Replace: "case false:"}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestAutoRunState", "TestBindNestedCapturedLater"},
		},
		{
			Name:     "procedures/binding-ignores-classification",
			Why:      "a catalogue change that makes the block state-changing leaves its policy and grants active (issue 19 item 2a)",
			Edits:    []Edit{{Dir: "procedures", Find: "case !slices.Equal(b.Signature, cur.Signature) || b.ReadOnly != cur.ReadOnly ||", Replace: "case false && b.ReadOnly != cur.ReadOnly ||"}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestAutoRunState", "TestBindCatalogueChange"},
		},
		{
			Name:     "procedures/binding-ignores-schema-hashes",
			Why:      "a tool's contract changes under a standing authorization and it stays active",
			Edits:    []Edit{{Dir: "procedures", Find: "case !slices.Equal(b.Tools, cur.Tools):", Replace: "case false:"}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestAutoRunState", "TestBindCatalogueChange"},
		},
		{
			Name:     "procedures/schema-hash-without-input-schema",
			Why:      "the schema hash leaves the input schema out: a changed contract is no drift",
			Edits:    []Edit{{Dir: "procedures", Find: `"input_schema": in, "output_schema": nil,`, Replace: `"input_schema": nil, "output_schema": nil,`}},
			Packages: []string{"./procedures", "./cmd/procgraph"},
			Tests:    []string{"TestSchemaHash", "TestBindCatalogueChange"},
		},
		{
			Name:     "procedures/grant-without-binding",
			Why:      "a grant is stored without what was granted: it can never be checked (it must then be inactive, and it is)",
			Edits:    []Edit{{Dir: "procedures", Find: "Binding: v.procBinding(p, v.classify(p.Signature))}", Replace: "}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestBindCatalogueChange"},
		},
		{
			Name:     "replay/policy-binding-unchecked",
			Why:      "a session policy decides a turn whatever changed since the operator approved (issue 19 items 1 and 2)",
			Edits:    []Edit{{Dir: "replay", Find: `if why := p.Binding.Check(b.bind); why != "" {`, Replace: `if why := p.Binding.Check(b.bind); why != "" && false {`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestBindLineSeparatorTwins", "TestBindCatalogueChange", "TestBindNestedCapturedLater"},
		},
		{
			Name:     "replay/policy-without-binding",
			Why:      "auto_run stores the policy without what was approved: it then applies to nothing, and approving stops skipping review",
			Edits:    []Edit{{Dir: "replay", Find: "RequestedBy: cur.RequestedBy, Binding: b.bind}", Replace: "RequestedBy: cur.RequestedBy}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTurnPolicies"},
		},
		{
			Name:     "replay/approved-turn-binding-unchecked",
			Why:      "an approved turn runs though a nested procedure was captured after the approval (run_once, issue 19 item 2b)",
			Edits:    []Edit{{Dir: "replay", Find: `if why := cur.Binding.Check(b.bind); why != "" {`, Replace: `if why := cur.Binding.Check(b.bind); why != "" && false {`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestBindNestedCapturedLater"},
		},
		{
			Name:     "replay/approval-without-binding",
			Why:      "the resolution does not bind the turn to what the operator saw",
			Edits:    []Edit{{Dir: "replay", Find: "next.Binding = b.bind", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestBindNestedCapturedLater"},
		},
		{
			Name:     "replay/nested-change-mid-run-unchecked",
			Why:      "a nested procedure that changed after the decision runs under the outer authorization",
			Edits:    []Edit{{Dir: "replay", Find: `if len(c.path) > 0 && c.bound.CheckNested(name, prep.p) != "" {`, Replace: "if false {"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestNestedChangedMidRun"},
		},
		{
			Name:     "replay/grant-run-unbound",
			Why:      "a run allowed by a durable grant does not carry the grant's binding to its nested calls",
			Edits:    []Edit{{Dir: "replay", Find: "c = &chain{req: c.req, usageKey: c.usageKey, bound: prep.p.Grant.Binding}", Replace: ""}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestNestedChangedMidRun"},
		},
	}...)
}
