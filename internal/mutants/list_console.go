package main

// The console's graph explorer at a thousand procedures (issue 23).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "ui/cluster-label-raw",
			Why:      "the graph explorer draws a cause cluster's name raw on the canvas (an agent names causes)",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "graph.js", Find: "anchor.shown : visibleText(c.label, true);", Replace: "anchor.shown : c.label;"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleGraph1k/default_view:_clusters_by_cause,_no_overlapping_labels"},
		},
		{
			Name:     "ui/declutter-off",
			Why:      "the explorer keeps every label: at a thousand procedures they overlap",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "graph.js", Find: "    if (clash) { hide.push(n); continue; }", Replace: "    if (clash && false) { hide.push(n); continue; }"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleGraph1k/default_view:_clusters_by_cause,_no_overlapping_labels"},
		},
		{
			Name:     "ui/label-keeps-prefix",
			Why:      "procedure labels keep the tools' shared prefix (the least telling part of a name)",
			Edits:    []Edit{{Dir: "ui/static/pages", Files: "graph.js", Find: "const strip = (t) => (prefix && t.startsWith(prefix) ? t.slice(prefix.length) : t);", Replace: "const strip = (t) => t;"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestConsoleGraph1k/a_tap_expands_a_cluster_into_procedures_labelled_by_their_tools"},
		},
	}...)
}
