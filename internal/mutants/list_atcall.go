package main

// The mutants of the review at the call's engine (issue 37; ADR 0045 "the
// determinism of a resume"): replay/atcall.go, its sandbox stop and the
// canonical digest it binds an approval to.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "atcall/state-change-without-approval",
			Why:      "a state-changing call reached before any approval is dispatched instead of pausing the run: the operator approves after the fact",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tcase c.approval != nil && c.approval.Rest:\n", Replace: "\tcase true:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallPausesAndResumes"},
		},
		{
			Name:     "atcall/reads-not-read-only",
			Why:      "the reads' allow-set is the run's whole allow-set: a state-changing call runs as a read, never paused",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "return slices.DeleteFunc(ro, func(n string) bool { return !slices.Contains(allowed, n) })", Replace: "_ = ro\n\treturn allowed"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallPausesAndResumes"},
		},
		{
			Name:     "atcall/recorded-calls-dispatched-again",
			Why:      "a resume dispatches the calls the record answers: every read before a pause reaches its tool twice",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tcase i < len(c.record):\n", Replace: "\tcase false && i < len(c.record):\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallPausesAndResumes"},
		},
		{
			Name:     "atcall/recorded-arguments-unchecked",
			Why:      "a resume answers a call from the record whatever its arguments: a program that asks something else gets the recorded answer",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "err != nil || d != digest {", Replace: "err != nil || d == \"\" {"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallRefusals/a_recorded_read_with_other_arguments"},
		},
		{
			Name:     "atcall/approved-arguments-unchecked",
			Why:      "the approved call is dispatched with arguments the operator never saw",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tcase digest != a.ArgsDigest:\n", Replace: "\tcase false:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallRefusals"},
		},
		{
			Name:     "atcall/approved-schema-unchecked",
			Why:      "the approved call is dispatched after its tool's contract changed",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tcase c.cat.SchemaHash(name) != a.SchemaHash:\n", Replace: "\tcase false:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallCatalogueChanged"},
		},
		{
			Name:     "atcall/approval-not-of-the-pause",
			Why:      "an approval of another call (position, tool, schema hash, arguments) resumes the pause",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tif a != p.Approval(a.Rest) {\n", Replace: "\tif false {\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallRefusals"},
		},
		{
			Name:     "atcall/early-end-not-diverged",
			Why:      "a resumed run that ends before the approved call answers as a run that ended: the divergence goes unseen",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tcase approval != nil && !ac.reached:\n", Replace: "\tcase false:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallEndsBeforeTheCall"},
		},
		{
			Name:     "atcall/block-unchecked",
			Why:      "a pause resumes with another block: its record answers a program it was not made by",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tif digest != p.Block {\n", Replace: "\tif digest == \"\" {\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallRefusals/another_block"},
		},
		{
			Name:     "atcall/rest-ignored",
			Why:      "approving the rest of the run pauses at the next state-changing call all the same",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tcase c.approval != nil && c.approval.Rest:\n", Replace: "\tcase c.approval != nil && false:\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallPausesAtEachCall"},
		},
		{
			Name:     "atcall/reads-unbounded",
			Why:      "a pause keeps reads larger than a recording may be",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "rawCalls(p.Calls), nil, r.now()); err != nil {", Replace: "rawCalls(p.Calls), nil, r.now()); err != nil && false {"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallReadsBounded"},
		},
		{
			Name:     "atcall/answers-inexact",
			Why:      "a resume answers a recorded call with its value through JSON numbers: a float the first run got (5.0) comes back an integer, and the program takes another path",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\tv, err := jsonvalue.Decode(want.Response)\n", Replace: "\tv, err := jsonvalue.Decode(want.Response)\n\tif err == nil {\n\t\tv, err = jsonvalue.Numbers(v)\n\t}\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallAnswersExactly"},
		},
		{
			Name:     "atcall/answers-recorded-inexact",
			Why:      "a pause keeps its answers as encoding/json writes them: 5.0 is kept as 5, and a resume gives the program an integer where it got a float",
			Edits:    []Edit{{Dir: "replay", Files: "atcall.go", Find: "\t\t\traw, err = sandbox.EncodeJSON(out)\n", Replace: "\t\t\traw, err = json.Marshal(out)\n"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestAtCallAnswersExactly"},
		},
		{
			Name:     "sandbox/stop-line-lost",
			Why:      "a stopped run does not say the line of the call it stopped at: the review cannot mark it",
			Edits:    []Edit{{Dir: "sandbox", Files: "stop.go", Find: "\tc.Line = reported.Line\n", Replace: "\tc.Line = 0\n"}},
			Packages: []string{"./sandbox", "./replay"},
			Tests:    []string{"TestStopKeepsTheLine", "TestAtCallPausesAndResumes"},
		},
		{
			Name:     "sandbox/stop-line-wrong",
			Why:      "a stopped run names another line than its call's: the review marks a line that did not make the call",
			Edits:    []Edit{{Dir: "sandbox", Files: "stop.go", Find: "\t\t\tc.Line = int(fr.Pos.Line)\n", Replace: "\t\t\tc.Line = 1\n"}},
			Packages: []string{"./sandbox"},
			Tests:    []string{"TestStopKeepsTheLine"},
		},
		{
			Name:     "jsonvalue/digest-not-canonical",
			Why:      "the digest is of the value's encoding as given: one argument written 1.0 or 1 gets two digests, and an approval binds to how a number was typed",
			Edits:    []Edit{{Dir: "internal/jsonvalue", Files: "digest.go", Find: "\tv, err := Normalize(x)\n", Replace: "\tv, err := x, error(nil)\n"}},
			Packages: []string{"./internal/jsonvalue"},
			Tests:    []string{"TestDigest"},
		},
		{
			Name:     "jsonvalue/negative-zero-kept",
			Why:      "the canonical JSON writes -0 where Decode reads 0: a value stored and read back gets another digest, and a resume through it diverges",
			Edits:    []Edit{{Dir: "internal/jsonvalue", Files: "digest.go", Find: "\tv, _ = zeroed(v)\n", Replace: "\t_ = zeroed\n"}},
			Packages: []string{"./internal/jsonvalue"},
			Tests:    []string{"TestDigest", "FuzzCanonical"},
		},
	}...)
}
