# Every target is a thin wrapper; the scripts say what they do.
.PHONY: demo test build lint

demo: ## the main job on the embedded SQLite default
	go run ./cmd/remstore demo

test: ## every test: Go (race, real PostgreSQL + SQLite) and the Python interop suite
	scripts/test.sh

build:
	go build -o bin/remstore ./cmd/remstore

lint:
	gofmt -l . && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

