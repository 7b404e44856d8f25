# Every target is a thin wrapper; the scripts say what they do.
.PHONY: demo test build lint fuzz soak bench bench-peer bench-python bench-citus vuln hygiene

demo: ## the main job on the embedded SQLite default
	go run ./cmd/remstore demo

test: ## every test: Go (race, real PostgreSQL + SQLite) and the Python interop suite
	scripts/test.sh

build: ## bin/remstore from this checkout; --version names the commit (scripts/ldflags.sh)
	go build -ldflags "$$(scripts/ldflags.sh)" -o bin/remstore ./cmd/remstore

lint:
	gofmt -l . && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...


FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME each
	scripts/fuzz.sh $(FUZZTIME)

SOAK ?= 10m
soak: ## both soaks (the library's and the whole API's) for SOAK, 10 minutes by default (CI runs 5 s of each inside make test)
	REMSTORE_SOAK=$(SOAK) REMSTORE_TEST_RUN='^(TestSoak|TestAPISoak)$$' scripts/test.sh

bench: ## remstore bench at full sizes against a throwaway PostgreSQL
	REMSTORE_BENCH_ONLY=1 scripts/test.sh

bench-peer: ## make bench with the Python peer's own code beside every workload it has
	REMSTORE_BENCH_ONLY=1 REMSTORE_BENCH_PEER=1 scripts/test.sh

bench-python: ## RemstoreSession.get_items(limit) beside the Agents SDK's SQLiteSession, through serve on a throwaway PostgreSQL
	REMSTORE_BENCH_ONLY=1 REMSTORE_BENCH_PYTHON=1 scripts/test.sh

bench-citus: ## the same workloads on single-node PostgreSQL and on a 3-node Citus cluster, side by side (QUICK=1: small sizes)
	REMSTORE_BENCH_ONLY=1 REMSTORE_BENCH_CITUS=1 scripts/test.sh

vuln: ## govulncheck against the live Go vulnerability database (VULNDB=snapshot: ../shared/vulndb)
	scripts/vuln.sh

hygiene: ## fail on a tracked binary or a tracked file over 1 MB
	scripts/hygiene.sh
