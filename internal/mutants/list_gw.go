package main

// The mutants of issue 33's several upstreams and names (docs/design.md
// "Several upstreams").
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "mcpdispatch/collision-first-wins",
			Why:      "two tools that map to one catalogue name are not refused: the first listed keeps the name, and calls meant for the other reach it",
			Edits:    []Edit{{Dir: "mcpdispatch", Find: "if first, dup := owner[name]; dup {\n\t\t\t\treturn nil, skipped, collision(first, who, name)\n\t\t\t}", Replace: "if _, dup := owner[name]; dup {\n\t\t\t\tcontinue\n\t\t\t}"}},
			Packages: []string{"./mcpdispatch", "./cmd/procgraph"},
			Tests:    []string{"TestCatalogueOfNames", "TestUpstreamsRefuseToStart"},
		},
		{
			Name:     "mcpdispatch/call-sends-catalogue-name",
			Why:      "a call is sent under the catalogue's name (m__get_sum) instead of the tool's name on its server (get-sum)",
			Edits:    []Edit{{Dir: "mcpdispatch", Find: "srv.Dispatch(ctx, t.WireName(), args)", Replace: "srv.Dispatch(ctx, name, args)"}},
			Packages: []string{"./mcpdispatch", "./cmd/procgraph"},
			Tests:    []string{"TestGatewayRoutesByCatalogue", "TestTwoUpstreamsThroughMain"},
		},
		{
			Name:     "mcpdispatch/call-to-wrong-server",
			Why:      "a call goes to the first configured server instead of the one its catalogue entry names",
			Edits:    []Edit{{Dir: "mcpdispatch", Find: "srv, ok := g.servers[t.Server]", Replace: "srv, ok := g.servers[g.Servers()[0]]"}},
			Packages: []string{"./mcpdispatch", "./cmd/procgraph"},
			Tests:    []string{"TestGatewayRoutesByCatalogue", "TestTwoUpstreamsThroughMain"},
		},
		{
			Name: "mcpdispatch/unconfigured-server-falls-back",
			Why:  "a tool whose server is not configured is sent to another server instead of being refused",
			Edits: []Edit{{Dir: "mcpdispatch", Find: "srv, ok := g.servers[t.Server]\n\tif !ok {",
				Replace: "srv, ok := g.servers[t.Server]\n\tfor _, other := range g.servers {\n\t\tif !ok {\n\t\t\tsrv, ok = other, true\n\t\t}\n\t}\n\tif !ok {"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestGatewayRoutesByCatalogue"},
		},
		{
			Name:     "mcpdispatch/long-name-without-hash",
			Why:      "a long tool name is cut without its hash: two long names that differ at the end get one catalogue name",
			Edits:    []Edit{{Dir: "mcpdispatch", Find: "name = name[:maxToolName-len(longMarker)-longHashLen] + longMarker + hex.EncodeToString(sum[:])[:longHashLen]", Replace: "name = name[:maxToolName-len(longMarker)-longHashLen] + longMarker + hex.EncodeToString(sum[:0])"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestToolName"},
		},
		{
			Name:     "mcpdispatch/upstreams-unknown-key-ignored",
			Why:      "an unknown key of a server in the upstreams file (a misspelt \"timout\") is ignored instead of refused",
			Edits:    []Edit{{Dir: "mcpdispatch", Find: "return p.errAt(off, \"%s: unknown key %q (known:", Replace: "_, _, err := p.value()\n\t\treturn err\n\t\treturn p.errAt(off, \"%s: unknown key %q (known:"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestParseUpstreamsRefuses"},
		},
		{
			Name:     "mcpdispatch/upstreams-repeated-key-last-wins",
			Why:      "a key repeated in the upstreams file keeps its last value instead of being refused",
			Edits:    []Edit{{Dir: "mcpdispatch", Find: "\t\tif seen[k] {\n\t\t\treturn p.errAt(koff,", Replace: "\t\tif seen[k] && false {\n\t\t\treturn p.errAt(koff,"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestParseUpstreamsRefuses"},
		},
		{
			Name:     "graph/neo4j/catalogue-drops-route",
			Why:      "Neo4j does not keep a tool's server: after a restart its calls go to the unnamed server or fail",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "catalogue_put.cypher", Find: "    t.server = tool.server,\n", Replace: ""}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Catalogue/put_replaces_and_round_trips"},
		},
		{
			Name:     "graph/neo4j/catalogue-keeps-old-route",
			Why:      "Neo4j keeps a route a new catalogue took away from a tool it still lists: its calls keep going to the old server",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "catalogue_put.cypher", Find: "    t.server = tool.server,\n", Replace: "    t.server = coalesce(tool.server, t.server),\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/Catalogue/put_replaces_and_round_trips"},
		},
		{
			Name:     "cmd/repeated-flag-last-wins",
			Why:      "a single-value flag given twice keeps the last value (--upstream-mcp-command twice silently drops the first server)",
			Edits:    []Edit{{Dir: "cmd/procgraph", Find: "func (o *once) Set(v string) error {\n\tif o.given {", Replace: "func (o *once) Set(v string) error {\n\tif false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestRepeatedFlagIsRefused"},
		},
		{
			Name:     "gateway/structured-numbers-rounded",
			Why:      "an upstream's structured content reaches the sandbox through the go-sdk's float64 numbers even when its exact JSON text came beside it: an id past 2^53 arrives as another id, and the next call acts on the wrong object",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "call.go", Find: "if exact, ok := exactTwin(res.Content, res.StructuredContent, d.opts.MaxResultBytes); ok {", Replace: "if exact, ok := exactTwin(res.Content, res.StructuredContent, d.opts.MaxResultBytes); false && ok {"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestStructuredNumbersExact", "TestReplayThroughMCP"},
		},
		{
			Name:     "gateway/any-text-taken-for-the-structured-content",
			Why:      "the first JSON text of a result is taken for its structured content without checking it carries the same value: a decoy text replaces what the tool returned",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "call.go", Find: "err == nil && sameValue(exact, sc) {", Replace: "err == nil {"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestStructuredNumbersExact", "TestReplayThroughMCP"},
		},
		{
			Name:     "gateway/twin-numbers-unchecked",
			Why:      "a JSON text whose numbers differ from the structured content's is taken for it: the tool's result is replaced by other numbers",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "call.go", Find: "return err == nil && f == y", Replace: "return err == nil && f == f"}},
			Packages: []string{"./mcpdispatch"},
			Tests:    []string{"TestStructuredNumbersExact"},
		},
	}...)
}
