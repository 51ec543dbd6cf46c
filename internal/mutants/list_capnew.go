package main

// The mutants of a new procedure's capture in one statement: its
// suggestion's page read in the capture's own statement, before it writes
// (docs/adr/0049-capture-reads-its-page.md).
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/capture-page-not-decoded",
			Why:      "the Neo4j store drops the page its capture statement read: the service reads find_filtered after the write, two statements on a new procedure's capture",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "res.Page, res.PageTotal, res.PageRead, err = c.capturePage(rec, q)", Replace: "res.Page, res.PageTotal, _, err = c.capturePage(rec, q)"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestWritePathStatements"},
		},
		{
			Name:     "neo4j/capture-page-not-read",
			Why:      "capture.cypher does not read the page it is asked for: the store answers none and the service reads it after the write",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "capture.cypher", Find: "UNWIND CASE WHEN $page THEN [1] ELSE [] END AS asked", Replace: "UNWIND CASE WHEN false THEN [1] ELSE [] END AS asked"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestWritePathStatements"},
		},
		{
			Name:     "neo4j/capture-page-unknown-trusted",
			Why:      "a capture's page that met classes the store has not read is answered as it is: the procedures of those classes are missing from it, and so is the suggestion",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "\tif len(asList(row[\"unknown\"])) > 0 {\n", Replace: "\tif false {\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestCapturePageUnknownClass"},
		},
		{
			Name:     "neo4j/capture-page-total-exact",
			Why:      "a capture's page read by the walk alone (not every match met) answers its size as its total: Suggest would not look for the exact procedure the walk missed",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "capture.go", Find: "return ps, pageTotal(*q, len(ps), row[\"complete\"] == true), true, nil", Replace: "return ps, pageTotal(*q, len(ps), true), true, nil"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/FindSparseTools"},
		},
		{
			Name:     "filtered-page/walk-unbounded",
			Why:      "fragments/filtered_page walks the rank index past $walk: a bounded page (the suggestion's, in a capture's statement too) reads every procedure",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "filtered_page.cypher", Find: "  ORDER BY p.rank\n  LIMIT $walk\n", Replace: "  ORDER BY p.rank\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/FindSparseTools"},
		},
		{
			Name:     "embedded/capture-page-not-answered",
			Why:      "the embedded store reads the page a capture asks for but does not answer it: the service reads it again after the write",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "res.PageRead, res.Page, res.PageTotal = in.Page != nil, page, total", Replace: "res.PageRead, res.Page, res.PageTotal = false, page, total"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureReadsNothingItsWriteConfirmed"},
		},
		{
			Name:     "procedures/capture-page-ignored",
			Why:      "the service reads the suggestion's page after the write though the store answered it with the write",
			Edits:    []Edit{{Dir: "procedures", Files: "capture.go", Find: "\tif !res.PageRead {\n", Replace: "\tif true {\n"}},
			Packages: []string{"./procedures"},
			Tests:    []string{"TestCaptureReadsNothingItsWriteConfirmed"},
		},
	}...)
}
