package main

// Lifting literals into parameters (issue 20, ADR 0029).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name: "signature/lift-inside-strings",
			Why:  "the rewrite replaces the literal's text wherever it first appears, inside a string too, not its token",
			Edits: []Edit{{Dir: "signature", Files: "lift.go", Find: "res.Code = applyEdits(p.code, edits)",
				Replace: "res.Code = strings.Replace(p.code, fmt.Sprint(res.Lifted[0].Example), res.Lifted[0].Parameter, 1)"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestLiftRewrite"},
		},
		{
			Name:     "signature/lift-ignores-reuse",
			Why:      "a literal also written outside tool arguments is lifted, leaving the instance value in the rest of the code",
			Edits:    []Edit{{Dir: "signature", Files: "lift.go", Find: "if others[valueKey(s.Value)] {", Replace: "if false {"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestLiftBadInput"},
		},
		{
			Name: "signature/lift-binding-used-elsewhere",
			Why:  "a top-level binding is lifted although it is also used outside tool arguments",
			Edits: []Edit{{Dir: "signature", Files: "lift.go", Find: "b.valid = b.valid && len(b.uses) > 0 && len(b.uses) == c.refs[b.name]",
				Replace: "b.valid = b.valid && len(b.uses) > 0"}},
			Packages: []string{"./signature"},
			Tests:    []string{"TestLiftBadInput"},
		},
		{
			Name: "signature/lift-moves-lines",
			Why:  "a literal spanning lines is replaced without its line breaks, so every later position moves",
			Edits: []Edit{{Dir: "signature", Files: "lift.go", Find: "edits = append(edits, edit{sp.off, sp.end, g.param + lineBreaks(p.code[sp.off:sp.end])})",
				Replace: "edits = append(edits, edit{sp.off, sp.end, g.param})"}},
			Packages: []string{"./replay"},
			Tests:    []string{"FuzzLift"},
		},
		{
			Name:     "procedures/lift-enum",
			Why:      "a literal passed to an enum property is lifted without the catalogue opting it in",
			Edits:    []Edit{{Dir: "procedures", Files: "lift.go", Find: `if _, enum := s["enum"]; enum {`, Replace: `if _, enum := s["enum"]; false && enum {`}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureLifts"},
		},
		{
			Name:     "procedures/lift-unvalidated",
			Why:      "a literal that its property's schema refuses is lifted, so a replay with the example would be refused",
			Edits:    []Edit{{Dir: "procedures", Files: "lift.go", Find: "p.schema.Validate(site.Value) != nil {", Replace: "false {"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureLifts"},
		},
		{
			Name: "procedures/lift-type-only-bounds",
			Why:  "a property schema with bounds (maxLength, minimum) is taken for a bare type, so its literals are not validated",
			Edits: []Edit{{Dir: "procedures", Files: "lift.go", Find: `case "description", "title", "examples", "default",`,
				Replace: `case "maxLength", "minimum", "description", "title", "examples", "default",`}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureLifts"},
		},
		{
			Name:     "procedures/lift-not-required",
			Why:      "lifted parameters are optional, so an invoke that forgets one runs with nothing where the captured value was",
			Edits:    []Edit{{Dir: "procedures", Files: "lift.go", Find: `out["properties"] = np`, Replace: `out["properties"] = np; out["required"] = []any{}`}},
			Packages: []string{"./procedures", "./api"},
			Tests:    []string{"TestCaptureLifts", "TestCaptureLiftsOverHTTP"},
		},
		{
			Name:     "procedures/lift-memo-any-catalogue",
			Why:      "the lifting kept for a code is served under another catalogue revision, so the same code is lifted as an old catalogue said",
			Edits:    []Edit{{Dir: "procedures", Files: "lift.go", Find: "liftMemoKey{req.Code, string(dialect), cat.Revision}", Replace: `liftMemoKey{req.Code, string(dialect), ""}`}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestLiftFollowsTheCatalogue"},
		},
		{
			Name:     "procedures/lift-memo-shared",
			Why:      "the lifting kept for a code is handed out as it is, so what one capture's caller changes in its answer is the next capture's",
			Edits:    []Edit{{Dir: "procedures", Files: "lift.go", Find: "return kept.clone(), nil", Replace: "return kept, nil"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestLiftFollowsTheCatalogue"},
		},
		{
			Name:     "procedures/lift-memo-kept-shared",
			Why:      "the first capture of a code is handed the lifting that is kept for it, so what its caller changes is the next capture's",
			Edits:    []Edit{{Dir: "procedures", Files: "lift.go", Find: "return l.clone(), nil", Replace: "return l, nil"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestLiftFollowsTheCatalogue"},
		},
		{
			Name:     "procedures/tool-props-any-catalogue",
			Why:      "a tool property's schema kept for typing parameters is served under another catalogue revision, so a lifted parameter is typed as an old catalogue said",
			Edits:    []Edit{{Dir: "procedures", Files: "typed.go", Find: "k := [3]string{cat.Revision, tool, keyword}", Replace: `k := [3]string{"", tool, keyword}`}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestTypedSchemaFollowsTheCatalogue", "TestLiftFollowsTheCatalogue"},
		},
		{
			Name:     "api/lift-false-ignored",
			Why:      `"lift": false on an HTTP capture is ignored`,
			Edits:    []Edit{{Dir: "api", Files: "procedures.go", Find: "NoLift: b.Lift != nil && !*b.Lift,", Replace: "NoLift: false,"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestCaptureLiftsOverHTTP"},
		},
		{
			Name:     "gate/turn-capture-unlifted",
			Why:      "a turn's capture stores the code as written although lifting is on",
			Edits:    []Edit{{Dir: "gate", Files: "gate.go", Find: "Metadata: capture.Metadata, NoLift: capture.NoLift}", Replace: "Metadata: capture.Metadata, NoLift: true}"}},
			Packages: []string{"./api"},
			Tests:    []string{"TestCaptureLiftsOverHTTP"},
		},
	}...)
}
