// Package layers holds the module's layering rule and its test: every
// package has a layer, and a package's production imports point only to
// packages of lower layers. So nothing imports upward, the two stores never
// import each other, and a new package must be given its place here before
// it builds green. Its tests also keep the seams narrow: no interface of
// the module declares more than MaxMethods methods (a wide one is composed
// of area interfaces, as procedures.Store is), and the domain package
// exports at most MaxDomainExports identifiers.
package layers

// Module is the import path every layer below is relative to.
const Module = "github.com/procgraph/procgraph"

// MaxMethods bounds the methods an interface of the module declares in its
// own body. An interface embedded in another counts where it is declared:
// procedures.Store is seven area interfaces and two methods.
const MaxMethods = 12

// MaxDomainExports bounds what the domain package (procedures) exports:
// its exported top-level identifiers (functions, types, variables,
// constants) and the exported methods declared on its types; struct
// fields and interface methods are not counted. The bound only goes down,
// as exports are unexported or areas move out of the package (a rule that
// needs no store or service into a leaf: audit, health, changes,
// recording, graphview, schemas, usage, binding, reuse, decide: see
// docs/adr/0054-the-domain-narrowed.md).
const MaxDomainExports = 199

// Domain is the package whose exports MaxDomainExports bounds.
const Domain = "procedures"

// Layers maps each package of the module to its layer. A package may import
// (outside its tests) only packages of strictly lower layers.
var Layers = map[string]int{
	// leaves: no procgraph imports beyond each other's lower layers
	"fault":                        0,
	"internal/blocksyntax":         0,
	"internal/jsonvalue":           0,
	"internal/text":                0,
	"internal/buildinfo":           0,
	"internal/cache":               0,
	"internal/findorder":           0,
	"internal/golden":              0,
	"notify":                       0,
	"internal/telemetry":           0,
	"internal/telemetry/otlptest":  0,
	"internal/privfile":            0,
	"internal/cputime":             0,
	"internal/heapfloor":           0,
	"cypher":                       0,
	"ui":                           0,
	"testcontainers":               0,
	"examples/upstream":            0,
	"mcpdispatch/internal/mcptest": 0,

	// checks and the language; the stores' wrappers (over internal/cache)
	"internal/storewrap":  1,
	"internal/fields":     1,
	"internal/strictjson": 1,
	"internal/answer":     1,
	"signature":           1,
	"sandbox":             1,
	"sandbox/sandboxtest": 2,
	"auth":                2,
	"search":              2,
	// the domain's vocabularies, leaves below it (audit over fault and
	// internal/fields; recording over fault; schemas over fault and
	// internal/jsonvalue; usage over internal/fields; the others over
	// nothing)
	"audit":     2,
	"health":    0,
	"changes":   0,
	"recording": 1,
	"graphview": 0,
	"binding":   0,
	"reuse":     0,
	"schemas":   1,
	"usage":     2,

	// the domain; the decision table of replays and turns (over audit),
	// which the domain does not import
	"procedures": 3,
	"decide":     3,

	// on the domain: metrics, the upstream, replays
	"metrics":     4,
	"mcpdispatch": 4,
	"replay":      4,
	// the tokens a store keeps (the store interface, their management)
	"tokens": 4,

	// the turn gate (its domain types and TurnStore included)
	"gate": 5,

	// the dump format, which carries turns and session policies; the
	// transports' fake of the service, replayer and gate
	"dump":                 6,
	"internal/fakeservice": 6,

	// the stores, which keep procedures (procedures.Store) and turns
	// (gate.TurnStore)
	"graph/embedded":  7,
	"graph/neo4j":     7,
	"graph/storetest": 7,

	// the transports; the replay and gate tests' harness (over the
	// embedded store)
	"api":               8,
	"mcpserve":          8,
	"replay/replaytest": 8,

	// wiring and tools
	"cmd/procgraph":            9,
	"bench":                    9,
	"bench/prompts":            9,
	"internal/mutants":         9,
	"internal/gen/classcypher": 9,
	"internal/layers":          9,
}
