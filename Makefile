# The developer's loop. `make check` before every commit; `make ci` is what CI
# runs on a clean checkout (.ci/run: it installs and starts what the tests need).

STATICCHECK := go run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The packages with concurrency that -race runs over (as .ci/run does): the embedded store, replay,
# the gate, the sandbox and its workers, the service and its change feed; each only if it exists.
RACE_PKGS := $(foreach d,graph/embedded replay gate sandbox procedures,$(if $(wildcard $(d)),./$(d)/...))

.PHONY: check fmt vet staticcheck unit test test-neo4j race mutants ci

## check: gofmt, vet, staticcheck and the tests in -short mode (no Neo4j needed)
check: fmt vet staticcheck unit

fmt:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

staticcheck:
	$(STATICCHECK) ./...

unit:
	go test -short ./...

## test: the README's test command (Neo4j store tests need NEO4J_URI)
test:
	go test ./...

## test-neo4j: start a real Neo4j (testcontainers/neo4j-server), run the packages that use it, stop it
test-neo4j:
	@set -e; eval "$$(bash testcontainers/neo4j-server/start)"; \
	trap 'bash testcontainers/neo4j-server/stop' EXIT; \
	CI=true go test -count=1 -timeout=30m ./testcontainers/... ./graph/... ./bench/...

## race: the race detector over the packages with concurrency
race:
	go test -race -count=1 $(RACE_PKGS)

## mutants: every deliberate bug of internal/mutants/list*.go must fail a named test (two at a time)
mutants:
	go run ./internal/mutants -jobs 2

## ci: what CI runs (installs packages, starts Neo4j, every test, the mutants)
ci:
	bash .ci/run
