package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "neo4j/search-rank-drifts",
			Why:      "search.cypher's score drifts from search.Score (log10 for ln): Neo4j pages and scores a search unlike the embedded store (docs/adr/0016)",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "search_score.cypher", Find: "log(1 + p.frequency)", Replace: "log10(1 + p.frequency)"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestSearchScoreIsGos", "TestStore/SearchRanking", "TestStore/Search"},
		},
		{
			Name:     "procedures/current-any-success",
			Why:      "BecomesCurrent lets every succeeded version replace the current one: the first succeeded version no longer stays current until promoted",
			Edits:    []Edit{{Dir: "procedures", Files: "current.go", Find: `current != StatusSucceeded && version == StatusSucceeded`, Replace: `version == StatusSucceeded`}},
			Packages: []string{"./procedures", "./graph/embedded"},
			Tests:    []string{"TestBecomesCurrent", "TestStore"},
		},
		{
			Name:     "neo4j/current-fragment-drifts",
			Why:      "becomes_current.cypher drifts from procedures.BecomesCurrent: a succeeded version replaces a succeeded current one on Neo4j",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "becomes_current.cypher", Find: `cvs[0].status <> 'succeeded' AND `, Replace: ``}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestBecomesCurrentIsGos"},
		},
		{
			Name:     "neo4j/rank-key-never-used-first",
			Why:      "rank_key.cypher drifts from findorder.Compare: never used procedures sort before used ones on Neo4j",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "rank_key.cypher", Find: `WHEN p.last_used_at IS NULL THEN '2'`, Replace: `WHEN p.last_used_at IS NULL THEN '/'`}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestRankKeyIsCompareFind"},
		},
		{
			Name:     "embedded/rank-key-oldest-first",
			Why:      "the embedded rankKey drifts from findorder.Compare: of two procedures used as often, the one used longer ago comes first",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "keys.go", Find: `b = binary.BigEndian.AppendUint64(b, ^lu)`, Replace: `b = binary.BigEndian.AppendUint64(b, lu)`}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestRankKeyIsCompareFind"},
		},
		{
			Name: "findorder/last-use-ignored",
			Why:  "Find's one order drifts: last_used_at no longer breaks a tie of frequency (the stores' rank keys and a search's ties no longer agree with it)",
			Edits: []Edit{{Dir: "internal/findorder", Find: `	case a.LastUsedAt != nil && *a.LastUsedAt != *b.LastUsedAt:
		return cmp.Compare(*b.LastUsedAt, *a.LastUsedAt)
`, Replace: ``}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestRankKeyIsCompareFind"},
		},
		{
			Name:     "embedded/class-key-drops-retired",
			Why:      "the embedded class key no longer encodes Retired: retired procedures count in their live class",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "classes.go", Find: "if b.Status == nil && *b.Flag(&c) ||", Replace: `if b.Status == nil && *b.Flag(&c) && b.Name != "Retired" ||`}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestClassKeyRoundTrips"},
		},
		{
			Name: "embedded/class-bits-renumbered",
			Why:  "the embedded class key numbers its flag bits from the highest: every key still round-trips and differs, but none is the key stored files hold (their class counts orphaned)",
			Edits: []Edit{
				{Dir: "graph/embedded", Files: "classes.go", Find: "set := f&(1<<i) != 0", Replace: "set := f&(1<<(7-i)) != 0"},
				{Dir: "graph/embedded", Files: "classes.go", Find: "f |= 1 << i", Replace: "f |= 1 << (7 - i)"},
			},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestClassKeyGolden"},
		},
		{
			Name:     "neo4j/class-key-drops-problem",
			Why:      "class_key.cypher no longer encodes Problem: procedures with a nesting problem share the key of those without",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_key.cypher", Find: "+ '|' + CASE WHEN p.problem <> '' THEN 'x' ELSE '-' END", Replace: "+ '|-'"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestClassKeyDistinct"},
		},
		{
			Name:     "neo4j/class-node-drops-demoted",
			Why:      "class_create.cypher no longer sets demoted on a new ProcedureClass node: its class reads back undemoted, and Find's exposed filter counts demoted procedures",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "class_create.cypher", Find: "k.demoted = coalesce(p.demoted, false),", Replace: ""}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestClassNodeRoundTrips"},
		},
		{
			Name:     "neo4j/class-decode-drops-retired",
			Why:      "the Neo4j store decodes every class read back as not retired: retired procedures count in Find's exposed totals",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "classes.go", Find: "*f.Flag(&c) = r.bool(f.Property)", Replace: `*f.Flag(&c) = r.bool(f.Property) && f.Name != "Retired"`}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestClassNodeRoundTrips"},
		},
		{
			Name:     "procedures/class-fields-not-generated",
			Why:      "procedures.ClassFields changes Problem's key token and the Cypher is not generated again: Neo4j would key classes unlike the one definition (and unlike its stored keys)",
			Edits:    []Edit{{Dir: "procedures", Files: "classfields.go", Find: `Token: "x"`, Replace: `Token: "p"`}},
			Packages: []string{"./internal/gen/classcypher"},
			Tests:    []string{"TestWrittenFilesAreCurrent"},
		},
	}...)
}
