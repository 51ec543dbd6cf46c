// Package bench holds procgraph's store and API benchmarks in one place, for
// both stores: the write path (capture of a new and of an existing
// procedure, grant, revoke, promote; through the store, over HTTP, and from
// 16 concurrent clients with the counts checked exactly), the read path
// (Find's flat top-k, Find against the server's own time for the same
// statements, the planner view against store.Find, a list page against
// /healthz) and a warm replay; ListParts and PlannerParts split a list page
// and the planner view into their parts (store, Service, encoding, HTTP);
// ListPage is the list page over HTTP at 1k and 100k; RequestPath puts each
// write request beside its store call, a bare HTTP request and the
// driver's floors. bench/cachelib, a
// module of its own, compares the cache libraries (ADR 0041).
//
// The embedded store runs in a temporary directory. Neo4j runs when
// NEO4J_URI (with NEO4J_USERNAME, NEO4J_PASSWORD) is set; everything a run
// writes there is in its own namespace (tool, procedure and cause names
// starting with a fresh prefix) and only that is deleted at the end, so the
// benchmarks never wipe data they did not create:
//
//	go test ./bench -run '^$' -bench . -benchtime 200x          # N = 1k
//	go test ./bench -run '^$' -bench . -benchtime 200x -bench.big  # also N = 100k
//
// Each benchmark logs its figures against the aims of issue 13 (b.Logf, and
// ratios as custom metrics).
package bench
