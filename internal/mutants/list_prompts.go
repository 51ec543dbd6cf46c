package main

// Fewer prompts, nothing unsafe: one program however its parameters are
// named, a grant's cover checked like a proc__ call, read from the grant
// index (issue 39; ADR 0048).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "canonical/params-keep-their-names",
			Why:      "the canonical program up to parameter names keeps them: a literal bound to a name and the same literal inline are two programs, and a grant or policy covers one of them",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "	base := c.hint\n	if base == \"\" {\n		base = \"p\"\n	}", Replace: "	base := name\n	if base == \"\" {\n		base = \"p\"\n	}"}},
			Packages: []string{"./signature", "./gate"},
			Tests:    []string{"TestCanonicalParams", "TestGrantCoversTheProgramUpToNames"},
		},
		{
			Name:     "canonical/params-one-name",
			Why:      "two parameters passed as one keyword get one canonical name: a program with two values and one with one value of them hash alike",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "for i := 2; c.given[n] || c.keptNames[n]", Replace: "for i := 2; c.keptNames[n]"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestCanonicalParams"},
		},
		{
			Name:     "canonical/fold-another-name",
			Why:      "x = E then return y is printed return E: the block's result is another value, and a program returning x merges with one returning E",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "if !ok || first == nil || first != lhs || c.kept[first]", Replace: "if !ok || first == nil || lhs == nil || c.kept[first]"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestCanonicalPairs"},
		},
		{
			Name:     "canonical/return-not-folded",
			Why:      "a result returned through a name is another program than the same result returned: every regeneration in the other return style is asked again",
			Edits:    []Edit{{Dir: "signature", Files: "canonical.go", Find: "	stmts = c.foldReturn(stmts)\n", Replace: "\n"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestCanonicalProgram", "TestCanonicalPairs"},
		},
		{
			Name:     "gate/grant-cover-skips-schema",
			Why:      "a grant covers its program with values a proc__ call of it would be refused (its input schema): the operator granted less than runs",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "if args, ok := mine.Arguments(gp.Program.Params, b.Arguments); ok && gp.Admits(args) {", Replace: "if _, ok := mine.Arguments(gp.Program.Params, b.Arguments); ok {"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestGrantCoversTheProgramUpToNames"},
		},
		{
			Name:     "procedures/grant-arguments-unmapped",
			Why:      "a turn's values are given to the procedure's parameters of the turn's names, not through the canonical names: a value is checked against another parameter's schema",
			Edits:    []Edit{{Dir: "procedures", Files: "canonical.go", Find: "		mine, ok := byCanonical[c]\n", Replace: "		mine, ok := p, byCanonical[c] != \"\"\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestGrantCoversTheProgramUpToNames"},
		},
		{
			Name:     "procedures/grant-index-first-name-only",
			Why:      "the grant cover looks for the procedure under the analysis' name only: a long signature's procedure, named with the catalogue, is never found",
			Edits:    []Edit{{Dir: "procedures", Files: "granted.go", Find: "	for _, name := range names {\n		if seen[name] {", Replace: "	for _, name := range names[:1] {\n		if seen[name] {"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestGrantCoversALongSignature"},
		},
		{
			Name:     "procedures/grant-index-deaf",
			Why:      "the grant index ignores this service's changes: a grant revoked here still covers turns until the next poll of the authorization revision",
			Edits:    []Edit{{Dir: "procedures", Files: "authcache.go", Find: "\t\t\te.seq, e.tomb = c.Seq, true\n", Replace: "\t\t\t_ = c\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestGrantCoverReadsNoProcedure"},
		},
		{
			Name:     "procedures/grant-index-forever",
			Why:      "the grant index trusts an entry however long the poller of the authorization revision has failed: a grant revoked on another instance covers turns here while the store cannot tell",
			Edits:    []Edit{{Dir: "procedures", Files: "authcache.go", Find: " && e.rev == rev && e.epoch == x.epoch && x.fresh(now) {", Replace: " && e.rev == rev {"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestGrantCoverReadsNoProcedure", "TestAuthorizationFailsClosed"},
		},
		{
			Name:     "procedures/grant-index-off",
			Why:      "every covered turn reads its procedure again: a store round trip on each turn a grant decides",
			Edits:    []Edit{{Dir: "procedures", Files: "authcache.go", Find: "	if e, ok := x.entries.Get(name); ok && e.looked", Replace: "	if e, ok := x.entries.Get(name); false && ok && e.looked"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestGrantCoverReadsNoProcedure"},
		},
	}...)
}
