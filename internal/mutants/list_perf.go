package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "procedures/find-walk-unbounded",
			Why:      "a tool-filtered Find walks the whole rank index when the tools are each common and rarely together (issue 24: the reuse suggestion at 100k)",
			Edits:    []Edit{{Dir: "procedures", Find: "if q.Limit == 0 || len(q.Tools) == 0 {", Replace: "if true {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestFindSparseToolsReadsBounded"},
		},
		{
			Name:     "embedded/find-walk-no-fallback",
			Why:      "a tool-filtered walk that read its bound without filling the page answers that partial page instead of taking the rarest tool's callers",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if counted < 0 && len(page) < end-q.Offset {", Replace: "if false {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore", "TestFindSparseToolsReadsBounded"},
		},
		{
			Name:     "neo4j/find-walk-no-fallback",
			Why:      "fragments/filtered_page (find_filtered.cypher's page) answers the walk's partial page instead of taking the rarest tool's callers",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "filtered_page.cypher", Find: "(expand OR (size(walked) < $limit AND NOT $bounded))", Replace: "expand"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestFindSparseToolsPlanBounded", "TestFindToolFilterPlans"},
		},
		{
			Name:     "procedures/capture-suggests-from-the-page",
			Why:      "a capture of an existing exposed procedure looks for its exact match in the page of the most used, which can miss it",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "\tif !res.Created && res.Procedure.Exposed {\n\t\treturn sameSignature(", Replace: "\tif false && !res.Created && res.Procedure.Exposed {\n\t\treturn sameSignature("}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureSuggestsItselfBeyondThePage"},
		},
		{
			Name:     "procedures/suggest-exact-from-the-page",
			Why:      "a block's reuse suggestion looks for its exact match in the page of the most used only: past 50 procedures holding its tools and more, a turn is told of a broader one instead",
			Edits:    []Edit{{Dir: "procedures", Files: "suggest.go", Find: "full = total < 0 || len(page) >= suggestScan", Replace: "full = total < -1"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestSuggestFindsTheExactBeyondThePage"},
		},
		{
			Name:     "procedures/suggest-unbounded",
			Why:      "the reuse suggestion asks for an exact page, whose read grows with the callers of its tools (issue 24: 199 ms at 100k on Neo4j)",
			Edits:    []Edit{{Dir: "procedures", Files: "suggest.go", Find: "SkipTotal: true, Bounded: true}", Replace: "SkipTotal: true}"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestSuggestReadsABoundedPage"},
		},
		{
			Name:     "embedded/bounded-falls-back",
			Why:      "a Bounded page whose walk did not fill it takes the rarest tool's callers after all: a read that grows with the store",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "find.go", Find: "return rare, page, -1, read, true // the walk's matches", Replace: "return rare, page[:0:0], 0, read, false // the walk's matches"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestFindBoundedReadsAtMostFindWalk", "TestStore"},
		},
		{
			Name:     "neo4j/bounded-falls-back",
			Why:      "fragments/filtered_page (find_filtered.cypher's page, a capture's) takes the rarest tool's callers after a Bounded page's walk: db hits that grow with the store",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "filtered_page.cypher", Find: "(size(walked) < $limit AND NOT $bounded)", Replace: "size(walked) < $limit"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestFindBoundedPlanBounded"},
		},
		{
			Name:     "embedded/compact-copies-any-bbolt-file",
			Why:      "procgraph compact rewrites a bbolt file that is not a procgraph store instead of refusing it",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "compact.go", Find: "if err := checkSchema(src, path); err != nil {", Replace: "if err := checkSchema(src, path); false && err != nil {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestCompactRefusesWhatItCannotCopy"},
		},
		{
			Name:     "embedded/compact-drops-sequences",
			Why:      "a compacted store loses its buckets' sequences (the next id a bucket hands out)",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "compact.go", Find: "return b.SetSequence(seq)", Replace: "return b.SetSequence(seq * 0)"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestCompactKeepsEveryRecord"},
		},
	}...)
}
