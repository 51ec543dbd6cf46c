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
	}...)
}
