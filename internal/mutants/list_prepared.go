package main

// The mutants of a turn's block prepared once and carried through its
// resolution and run (docs/adr/0044-the-turn-domain.md): the block kept
// for a turn stands for it only while the stored turn holds what it was
// prepared from, and only while what it binds to is unchanged.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name: "gate/kept-block-any-code",
			Why:  "the block kept for a turn stands for an operator's edited block: approving an edit to a read runs the submitted kill_job",
			Edits: []Edit{{Dir: "gate", Files: "blocks.go", Find: "ok && k.code == code && k.dialect == cur.Dialect",
				Replace: "ok && k.dialect == cur.Dialect"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestTurnPreparedAgain/an_edited_block_runs,_not_the_submitted_one"},
		},
		{
			Name:     "gate/kept-block-any-arguments",
			Why:      "the block kept for a turn stands for it whatever arguments the stored turn holds: what is checked and run are not the values the operator sees",
			Edits:    []Edit{{Dir: "gate", Files: "blocks.go", Find: "err == nil && string(args) == k.args", Replace: "err == nil && args != nil"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestTurnPreparedAgain/the_stored_arguments_are_what_is_checked"},
		},
		{
			Name:     "replay/recheck-ignores-binding",
			Why:      "a turn's block is rechecked without comparing its binding: its arguments are not validated again against a schema its catalogue changed, and the answer is not a preparation's",
			Edits:    []Edit{{Dir: "replay", Files: "block.go", Find: `if b.Binding.Check(&bound) != "" {`, Replace: `if false && b.Binding.Check(&bound) != "" {`}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestTurnPreparedAgain/arguments_that_no_longer_fit_the_catalogue"},
		},
		{
			Name:     "gate/kept-block-outlives-its-turn",
			Why:      "the block kept for a turn expired on another instance stays in memory with its code and argument values until evicted",
			Edits:    []Edit{{Dir: "gate", Files: "blocks.go", Find: "return !now.Before(k.deadline)", Replace: "return false"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestKeptBlocksGo"},
		},
		{
			Name:     "gate/turn-prepared-again",
			Why:      "a turn's resolution and run prepare its block again rather than recheck the one prepared at submit",
			Edits:    []Edit{{Dir: "gate", Files: "blocks.go", Find: "b, ok, err := g.r.Recheck(ctx, k.b)", Replace: "b, ok, err := k.b, false, error(nil)"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestTurnPreparedOnce"},
		},
	}...)
}
