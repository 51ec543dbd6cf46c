package main

// The store's authorization revision and the one cache trusted under it
// (docs/design.md "What an authorization binds to", ADR 0052): every write
// that can change what a grant or a policy decides moves the revision, in
// its own transaction, on both stores; the process's poller drops what the
// service and the gate cached when it moved; nothing is trusted once the
// poller has not read it for three intervals.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "counter/embedded-grant-no-bump",
			Why:      "the embedded store's SetGrant does not move the authorization revision: a grant revoked by one service is trusted by another on the same store until restart",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "decisions.go", Find: "\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif err := bumpAuth(tx); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tout, err = s.appendAndLoad(tx, d, name)\n", Replace: "\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tout, err = s.appendAndLoad(tx, d, name)\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/embedded-policy-delete-no-bump",
			Why:      "the embedded store's DeletePolicies does not move the authorization revision: a policy revoked on one instance goes on deciding another's turns",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "approvals.go", Find: "\t\tif err := bumpAuth(tx); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tn = len(keys)\n", Replace: "\t\tn = len(keys)\n"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/embedded-demotion-no-bump",
			Why:      "a run that demotes a procedure on the embedded store does not move the authorization revision: its grant goes on covering turns on other instances",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "\t\t\tif res.Demotion != health.DemotionNone {\n\t\t\t\tif err := bumpAuth(tx); err != nil {", Replace: "\t\t\tif false {\n\t\t\t\tif err := bumpAuth(tx); err != nil {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/embedded-capture-bumps-always",
			Why:      "every capture moves the authorization revision: every instance drops its cache on each capture and turns read the store again",
			Edits:    []Edit{{Dir: "graph/embedded", Files: "capture.go", Find: "\tif authChanged {\n\t\tif err := bumpAuth(tx); err != nil {", Replace: "\tif true {\n\t\tif err := bumpAuth(tx); err != nil {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/neo4j-grant-no-bump",
			Why:      "Neo4j's grant.cypher does not move the authorization revision: a grant revoked on one instance is trusted by the others until restart",
			Edits:    []Edit{{Dir: "cypher/queries", Files: "grant.cypher", Find: "WITH p, sameCatalogue, ok, created, same, write, write AS bump\n", Replace: "WITH p, sameCatalogue, ok, created, same, write, false AS bump\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/neo4j-policy-delete-no-bump",
			Why:      "Neo4j's DeletePolicies does not move the authorization revision: a policy revoked on one instance goes on deciding another's turns",
			Edits:    []Edit{{Dir: "graph/neo4j", Files: "approvals.go", Find: "\t\tif err := exec(ctx, tx, \"policies_delete\", map[string]any{\"ids\": ids}); err != nil {\n\t\t\treturn 0, err\n\t\t}\n\t\tif err := exec(ctx, tx, \"auth_bump\", nil); err != nil {\n\t\t\treturn 0, err\n\t\t}\n", Replace: "\t\tif err := exec(ctx, tx, \"policies_delete\", map[string]any{\"ids\": ids}); err != nil {\n\t\t\treturn 0, err\n\t\t}\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/neo4j-demotion-no-bump",
			Why:      "a run that demotes a procedure on Neo4j (fragments/demotion.cypher) does not move the authorization revision: its grant goes on covering turns on other instances",
			Edits:    []Edit{{Dir: "cypher/fragments", Files: "demotion.cypher", Find: "WITH p, v, wasDemoted, NOT wasDemoted AND coalesce(p.demoted, false) AS bump\n", Replace: "WITH p, v, wasDemoted, false AS bump\n"}},
			Packages: []string{"./graph/neo4j"},
			Tests:    []string{"TestStore/AuthRevision"},
		},
		{
			Name:     "counter/poller-does-not-invalidate",
			Why:      "the poller reads a moved authorization revision but drops nothing: a grant revoked or a policy deleted on another instance goes on deciding this instance's turns",
			Edits:    []Edit{{Dir: "procedures", Files: "authcache.go", Find: "\tif !x.polled || rev != x.rev {\n\t\tx.invalidate()\n\t}\n", Replace: "\tif !x.polled {\n\t\tx.invalidate()\n\t}\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestAcrossInstances"},
		},
		{
			Name:     "counter/fail-closed-bound-ignored",
			Why:      "what the cache holds is trusted however long the poller has failed to read the authorization revision: another instance's revoke is never seen while the read fails",
			Edits:    []Edit{{Dir: "procedures", Files: "authcache.go", Find: "\treturn x.polled && !now.Before(x.polledAt) && now.Sub(x.polledAt) <= authStaleAfter*x.every\n", Replace: "\treturn x.polled\n"}},
			Packages: []string{"./gate"},
			Tests:    []string{"TestAuthorizationFailsClosed"},
		},
	}...)
}
