package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "traces/arguments-in-a-span",
			Why:      "an upstream call's span carries its arguments: argument values leave procgraph in its traces",
			Edits:    []Edit{{Dir: "replay", Find: `telemetry.Start(ctx, "procgraph.tool_call", telemetry.Tool.String(name))`, Replace: `telemetry.Start(ctx, "procgraph.tool_call", telemetry.Tool.String(fmt.Sprint(name, args)))`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTracesOfAnInvoke"},
		},
		{
			Name:     "traces/replay-span-without-decision",
			Why:      "a replay's span does not say which decision authorised it",
			Edits:    []Edit{{Dir: "replay", Files: "replayer.go", Find: "telemetry.Decision.String(d.ID),", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTracesOfAnInvoke"},
		},
		{
			Name:     "replay/calls-routed-by-a-fresh-catalogue",
			Why:      "a run's upstream calls are routed by a catalogue read per call (a Neo4j statement each) instead of the one the run was decided and checked with",
			Edits:    []Edit{{Dir: "replay", Files: "nested.go", Find: "if cd, ok := t.dispatcher.(CatalogueDispatcher); ok && t.catalogue != nil {", Replace: "if cd, ok := t.dispatcher.(CatalogueDispatcher); ok && t.catalogue == nil {"}},
			Packages: []string{"./replay"},
			Tests:    []string{"TestCallsRoutedByTheRunsCatalogue"},
		},
	}...)
}
