package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "heapfloor/percent-ignores-the-floor",
			Why:      "the GC percent stays the runtime's 100 whatever the floor: a small heap is collected every few requests again (issue 38: 0.1–0.8 ms of a /mcp proc__ call)",
			Edits:    []Edit{{Dir: "internal/heapfloor", Files: "heapfloor.go", Find: "\tif floor <= live {", Replace: "\tif true {"}},
			Packages: []string{"./internal/heapfloor"},
			Tests:    []string{"TestPercent", "TestKeepFollowsTheLiveHeap"},
		},
		{
			Name:     "heapfloor/set-once",
			Why:      "the percent is set when the floor is taken and never follows the live heap: a heap grown past the floor keeps a percent made for a small one, and grows by that multiple",
			Edits:    []Edit{{Dir: "internal/heapfloor", Files: "heapfloor.go", Find: "\t\tadjustLocked()\n\t\tarm()\n", Replace: "\t\tadjustLocked()\n"}},
			Packages: []string{"./internal/heapfloor"},
			Tests:    []string{"TestKeepFollowsTheLiveHeap"},
		},
		{
			Name:     "heapfloor/release-keeps-the-percent",
			Why:      "the last release leaves the floor's percent in place: a closed server's process keeps collecting as if it held the floor",
			Edits:    []Edit{{Dir: "internal/heapfloor", Files: "heapfloor.go", Find: "\t\t\t\tdebug.SetGCPercent(keeper.restore)\n", Replace: ""}},
			Packages: []string{"./internal/heapfloor"},
			Tests:    []string{"TestKeepFollowsTheLiveHeap"},
		},
		{
			Name:     "serve/heap-floor-not-held",
			Why:      "serve parses --heap-floor but never holds it",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "main.go", Find: "\tm.keepHeapFloor(ctx)\n", Replace: ""}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestServeHoldsTheHeapFloor"},
		},
		{
			Name:     "serve/heap-floor-over-gogc",
			Why:      "the floor overrides an operator's GOGC",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "heapfloor.go", Find: "\tcase getenv(ctx, \"GOGC\") != \"\":", Replace: "\tcase false:"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestHeapFloorGivesWayToGOGC"},
		},
		{
			Name:     "embedded/write-sets-the-cached-procedure",
			Why:      "a write sets the fields of the procedure record the decode cache shares with readers: a reader of the same bytes sees a write that may roll back",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "tx.go", Find: "\tr := *shared\n\treturn &r, nil", Replace: "\treturn shared, nil"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestReadsForAWriteCopyTheCachedRecords"},
		},
		{
			Name:     "embedded/write-sets-the-cached-version",
			Why:      "a write sets the fields of the version record the decode cache shares with readers",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "tx.go", Find: "\tr := *shared\n\tif r.Health", Replace: "\tr := shared\n\tif r.Health"}, {Dir: "graph/embedded", Files: "tx.go", Find: "\t\treturn nil, err\n\t}\n\treturn &r, nil\n}\n\n// mustVersion", Replace: "\t\treturn nil, err\n\t}\n\treturn r, nil\n}\n\n// mustVersion"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestReadsForAWriteCopyTheCachedRecords"},
		},
		{
			Name:     "embedded/listing-misses-unindexed",
			Why:      "a filtered audit listing walks its index only: the records whose entries the decision indexer has not written yet are missing from it (an audit gap)",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "\t\tif p != nil {\n\t\t\tvar err error", Replace: "\t\tif false {\n\t\t\tvar err error"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestUnindexedDecisionsAreListed", "TestUnindexedSurviveACrash", "TestStore"},
		},
		{
			Name:     "embedded/listing-tail-unfiltered",
			Why:      "the unindexed records are listed whatever the filter",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decindex.go", Find: "\t\tif f.Match(d) {\n\t\t\tout = append(out, tailRecord", Replace: "\t\tif true {\n\t\t\tout = append(out, tailRecord"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestUnindexedDecisionsAreListed"},
		},
		{
			Name:     "embedded/indexer-never-woken",
			Why:      "a commit that leaves records unindexed does not wake the decision indexer: they wait for the next Open or Close",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "store.go", Find: "\t\t\t\ttx.OnCommit(s.decIndexer.wake)\n", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestIndexerTakesNewRecords"},
		},
		{
			Name:     "embedded/close-leaves-unindexed",
			Why:      "Close does not index what is pending: a file left for an older procgraph, or a dump of it, holds records no index lists",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "store.go", Find: "\ts.stopDecisionIndexer()\n", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestCloseIndexesUnindexedDecisions"},
		},
		{
			Name:     "embedded/prune-keeps-unindexed",
			Why:      "a pruned record's key stays in bUnindexed",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "prune.go", Find: "\t\t\t\tif err := tx.Bucket(bUnindexed).Delete(k); err != nil {\n\t\t\t\t\treturn err\n\t\t\t\t}\n", Replace: ""}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestPruneTakesUnindexed"},
		},
		{
			Name:     "embedded/open-corrupt-record-internal",
			Why:      "a record Open's upgrades read that is not JSON answers internal instead of unavailable: a corrupt file looks like a bug, not a store to restore",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "store.go", Find: "\t\tif fault.ErrorCode(err) == fault.CodeInternal {", Replace: "\t\tif false {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestOpenCorruptRecordIsUnavailable"},
		},
		{
			Name:     "embedded/indexer-panics-through",
			Why:      "a bbolt panic on a corrupt page in the decision indexer's goroutine takes the whole server down",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decindex.go", Find: "\t\tif r := recover(); r != nil {\n\t\t\ts.log.Error().Interface(\"panic\", r).Msg(\"audit records could not be indexed", Replace: "\t\tif r := any(nil); r != nil {\n\t\t\ts.log.Error().Interface(\"panic\", r).Msg(\"audit records could not be indexed"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestIndexerSurvivesACorruptPage"},
		},
	}...)
}
