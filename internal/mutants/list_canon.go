package main

// The canonical program (issue 39 item 1, ADR 0039): the rules that keep
// programs apart. Each mutant merges two blocks that make other tool calls
// (or that the rule keeps apart, failing closed); a pair of the corpus
// (signature/testdata/canonical/pairs.txtar) must catch it.
func init() {
	pairs := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = "TestCanonicalPairs/" + n
		}
		return out
	}
	mutants = append(mutants, []Mutant{
		{
			Name:     "signature/canon/reorder-state-changing",
			Why:      "calls of tools the catalogue does not call read-only are reordered, so a state-changing call moves",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if !ok || !isToolCall(call) || !readOnly(call.Fn.(*syntax.DotExpr).Name.Name) {", Replace: "if !ok || !isToolCall(call) {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/state_changing_calls_swapped", "differ/unknown_tool_not_reordered"),
		},
		{
			Name: "signature/canon/reorder-across-write",
			Why:  "a statement that is not a read does not end the run of reads, so reads move across a state-changing call",
			Edits: []Edit{{Dir: "signature", Files: "canonical.go", Find: "order[i] = ordered{group + 1, 0, 0, s}\n}\ngroup += 2",
				Replace: "order[i] = ordered{group + 1, 0, 0, s}\n}\ngroup += 0"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/state_changing_call_moved_across_a_read"),
		},
		{
			Name:     "signature/canon/reorder-rebinding",
			Why:      "two reads that bind one name are reordered, so the name ends up holding the other read's result",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if r.lhs != nil && slices.Contains(bound, r.lhs) {", Replace: "if false {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/reads_binding_one_name_swapped"),
		},
		{
			Name:     "signature/canon/reorder-computed-arguments",
			Why:      "reads whose arguments are not literals or parameters are reordered, so a read that feeds another moves before it",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if !ok || kw.Op != syntax.EQ || !c.jsonAtom(unparen(kw.Y)) {", Replace: "if !ok || kw.Op != syntax.EQ {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/read_that_feeds_another_moved", "differ/read_with_a_computed_argument_not_reordered"),
		},
		{
			Name:     "signature/canon/reorder-opaque",
			Why:      "an opaque block (tools aliased) is reordered, though calls through the alias are invisible",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if !a.Opaque && readOnly != nil {", Replace: "if readOnly != nil {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/opaque_alias_not_reordered"),
		},
		{
			Name:     "signature/canon/gather-target-twice",
			Why:      "a gathered read whose targets repeat a name is reordered, so the name ends up holding the other call's result",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if b == nil || b.Scope != resolve.Local || slices.Contains(firsts, b.First) {", Replace: "if b == nil || b.Scope != resolve.Local {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/gathered_target_bound_twice"),
		},
		{
			Name: "signature/canon/rename-parameter",
			Why:  "parameters are renamed like locals, so blocks that pass other parameters to a tool share a hash",
			Edits: []Edit{{Dir: "signature", Files: "canonical.go", Find: "if b == nil || b.First == nil {\nreturn nil\n}",
				Replace: "if b != nil && b.Scope == resolve.Predeclared && id.Name != toolsName && !starlark.Universe.Has(id.Name) {\nreturn id\n}\nif b == nil || b.First == nil {\nreturn nil\n}"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/another_parameter"),
		},
		{
			Name:     "signature/canon/rename-nested-parameters",
			Why:      "the parameters of nested functions are renamed, though callers pass them by keyword",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "c.kept[first] = true", Replace: "c.kept[first] = false"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/nested_function_parameter_renamed"),
		},
		{
			Name:     "signature/canon/rename-onto-a-parameter",
			Why:      "a local is renamed to a name a parameter has (v1), so it captures the parameter's uses",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if !c.reserved[name] {", Replace: "if true {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/local_named_like_a_parameter"),
		},
		{
			Name:     "signature/canon/inline-used-elsewhere",
			Why:      "a literal binding also used outside tool arguments is inlined (lifting would not lift it)",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "cand.ok = false // another binding, or a use outside tool arguments", Replace: "_ = cand"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/binding_used_outside_tool_arguments"),
		},
		{
			Name:     "signature/canon/inline-before-binding",
			Why:      "a literal binding used before its statement is inlined, so a block that fails before its call merges with one that makes it",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "cand.ok = cand.ok && !before(id.NamePos, cand.end)", Replace: "cand.ok = cand.ok && id != nil"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/use_before_binding"),
		},
		{
			Name:     "signature/canon/keywords-with-calls-sorted",
			Why:      "a tool call's keyword arguments are sorted though they call tools, so state-changing calls swap",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "case *syntax.CallExpr, *syntax.LambdaExpr, *syntax.Comprehension:\ncalls = true", Replace: "case *syntax.CallExpr, *syntax.LambdaExpr, *syntax.Comprehension:\ncalls = false"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/keyword_order_with_calls"),
		},
		{
			Name:     "signature/canon/float-as-integer",
			Why:      "an integral float is printed as an integer, so 1.0 and 1 (another JSON argument) share a hash",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: `s += ".0"`, Replace: `s += ""`}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/integer_and_float"),
		},
		{
			Name:     "signature/canon/bytes-as-string",
			Why:      "a bytes literal is printed as a string, so b\"x\" (refused as an argument) and \"x\" share a hash",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "c.str(syntax.Quote(v, true))", Replace: "c.str(syntax.Quote(v, false))"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/bytes_and_string"),
		},
		{
			Name:     "signature/canon/one-tuple-as-parentheses",
			Why:      "a one-element tuple is printed without its comma, so the canonical program of (r,) returns r (its own canonical program is another)",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if len(e.List) == 1 {", Replace: "if len(e.List) == 0 {"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestCanonicalIdempotent/differ/tuple_and_parentheses.a.star"},
		},
		{
			Name:     "signature/canon/operands-unparenthesised",
			Why:      "compound operands are printed without parentheses, so a - b - 1 and a - (b - 1) share a hash",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "c.str(\"(\")\nc.expr(e)\nc.str(\")\")", Replace: "c.expr(e)"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/operands_grouped_otherwise"),
		},
		{
			Name:     "signature/canon/last-return-dropped",
			Why:      "a last top-level return of a value is dropped like return None, so the block's result is lost",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: `if !ok || !universal(id, "None") {`, Replace: "if !ok || id == nil {"}},
			Packages: []string{"./signature"},
			Tests:    pairs("differ/returned_value_dropped"),
		},
	}...)
}
