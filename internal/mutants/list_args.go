package main

// The mutants of a tool's input_schema checked at call time, schema errors
// told without values, and the run's result on its decision
// (docs/design.md: trust model principle 3, "Health of each version",
// "Audit: the decision recorder").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "sandbox/call-time-schema-check-skipped",
			Why:      "a tool call's arguments are not checked against the tool's input_schema: a literal over the schema's maximum reaches the upstream",
			Edits:    []Edit{{Dir: "sandbox", Find: "if g.check == nil {", Replace: "if true {"}},
			Packages: []string{"./replay", "./gate", "./cmd/procgraph"},
			Tests:    []string{"TestToolArgumentsCheckedAtCallTime", "TestTurnToolArgumentsCheckedAtCallTime", "TestToolArgumentsCheckedAtCallTimeEndToEnd"},
		},
		{
			Name:     "replay/invalid-arguments-counted-in-health",
			Why:      "a call refused for its arguments is classed tool_refused and counted: any caller demotes a procedure by choosing arguments",
			Edits:    []Edit{{Dir: "replay", Files: "health.go", Find: "case sandbox.InvalidArguments:\n\t\treturn health.FailureInvalidArguments", Replace: "case sandbox.InvalidArguments:\n\t\treturn health.FailureToolRefused"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestToolArgumentsCheckedAtCallTime"},
		},
		{
			Name:     "replay/verify-detail-quotes-message",
			Why:      "verify's detail is the validator's message: it quotes a recorded value to a caller who may not read recordings",
			Edits:    []Edit{{Dir: "replay", Files: "verify.go", Find: `return "its arguments break its input_schema: " + schemas.SchemaMessage(schemas.SchemaViolations(err))`, Replace: `return err.Error() + schemas.SchemaMessage(nil)`}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestVerifyDetailQuotesNoRecordedValue"},
		},
		{
			Name:     "procedures/schema-violation-quotes-message",
			Why:      "the one home of schema errors passes the validator's message on: every caller is told the value",
			Edits:    []Edit{{Dir: "schemas", Files: "violation.go", Find: `v.Message = "fails " + v.Keyword`, Replace: `v.Message = e.Message`}},
			Packages: []string{"./schemas", "./replay"},
			Tests:    []string{"TestSchemaViolationsQuoteNoValue", "TestInvokeArgumentErrorsQuoteNoValue"},
		},
		{
			Name:     "procedures/run-result-not-recorded",
			Why:      "the run's result is not stored beside its decision: the audit says allowed for a run that failed",
			Edits:    []Edit{{Dir: "procedures", Files: "recorder.go", Find: "return d, s.SetDecisionResult(ctx, d.ID, d.Result)", Replace: "_ = s\n\t\treturn d, nil"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestRunFileRecordsItsResult"},
		},
		{
			Name:     "embedded/decision-result-dropped",
			Why:      "the embedded store answers a result as set but does not keep it",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "\t\td.Result = result\n", Replace: "\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Decisions/the_run's_result_beside_the_record"},
		},
		{
			Name:     "neo4j/decision-result-dropped",
			Why:      "decisions.cypher leaves the result out: the Neo4j audit log says allowed for a run that failed",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "decisions.cypher", Find: ".note, .suggestion, .session, .result} AS decision", Replace: ".note, .suggestion, .session} AS decision"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Decisions/the_run's_result_beside_the_record"},
		},
	}...)
}
