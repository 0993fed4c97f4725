# Eddy's build. Every target works from a clean checkout with only Go
# installed; `make test` also wants redis-server for the differential tests
# (.ci/run installs it). Only `make deps` (and a first build) needs the
# network: `make test` runs with GOPROXY=off once deps are in.
#
# make bench-compare BASE=<rev> runs the Go benchmarks of storage/,
# stream/ and server/ on revision BASE and on the working tree, in
# alternating rounds, and prints benchstat's comparison (bench/compare.sh;
# COUNT=10 rounds, BENCH='.' regexp, e.g.
# make bench-compare BASE=HEAD~1 BENCH='XAdd|Codec' COUNT=6).

GO       ?= go
BIN      ?= bin/eddy
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
TIMEOUT  ?= 15m
FUZZTIME ?= 10s

.PHONY: all deps build run test portable testrace bench bench-compare fuzz lint docs clean

all: build

# Every module that any platform's build or tests need, as go.mod lists
# them (github.com/google/go-tpm too, which only nats-server's Windows
# build imports), so that the tests and the portable vet fetch nothing.
deps:
	@echo "go mod download: the modules of go.sum (from the network the first time; quiet)"
	$(GO) mod download

# A first build downloads the modules and compiles Pebble and nats-server,
# which takes minutes on a small machine: -v names each package as it is
# compiled (nothing once they are cached), so the wait shows its progress.
build:
	@echo "Building $(BIN) $(VERSION). A first build downloads and compiles the dependencies: a few minutes."
	CGO_ENABLED=0 $(GO) build -v -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/eddy

# Defaults: 127.0.0.1:6379, store in ./data. Pass directives with ARGS,
# e.g. make run ARGS='--port 7000 --appendfsync always'.
run: build
	./$(BIN) server $(ARGS)

# tests/ builds bin/eddy with `go build` in its TestMain, which go test's
# cache cannot see: a cached pass would hide a change to the server, so
# that package always runs (-count=1). GOPROXY=off: after deps, a module
# that would still be fetched is a failure here, not a network dependency.
# The server's tests run a second time on the event loop's portable
# backend (-tags portablepoll, server/poll), the one Windows serves with.
test: deps
	GOPROXY=off $(GO) vet ./...
	GOPROXY=off $(MAKE) portable
	GOPROXY=off $(GO) test -timeout $(TIMEOUT) $$($(GO) list ./... | grep -v '/tests$$')
	GOPROXY=off $(GO) test -tags portablepoll -timeout $(TIMEOUT) ./server/...
	GOPROXY=off $(GO) test -count=1 -timeout $(TIMEOUT) ./tests/

# Eddy is served and tested on Linux, and builds elsewhere with the same
# event loop over another poller (server/poll: kqueue, or goroutines on
# Windows): vet for macOS and Windows keeps it so. tools/portable.sh vets
# only the packages whose code differs from Linux's there, and says why
# that is enough.
portable:
	GO=$(GO) bash tools/portable.sh darwin/arm64 windows/amd64

# The race detector needs cgo. tests/ always runs, as in test.
testrace:
	CGO_ENABLED=1 $(GO) test -race -timeout 30m $$($(GO) list ./... | grep -v '/tests$$')
	CGO_ENABLED=1 $(GO) test -race -tags portablepoll -timeout 30m ./server/...
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./tests/

# bench/bench.sh runs Eddy and a real redis-server side by side and prints
# the Eddy/Redis ratio per load; then the Go benchmarks.
bench: build
	bash bench/bench.sh
	$(GO) test -run '^$$' -bench . -benchmem ./storage/ ./stream/ ./server/

# The Go benchmarks of BASE against the working tree, through benchstat.
# COUNT and BENCH pass through the environment to bench/compare.sh.
bench-compare:
	@if [ -z "$(BASE)" ]; then echo "usage: make bench-compare BASE=<rev> [COUNT=10] [BENCH=regexp]"; exit 2; fi
	GO=$(GO) bash bench/compare.sh '$(BASE)'

# Runs every Fuzz* target for FUZZTIME each. go test -fuzz takes one target
# in one package at a time, so list them first. Go 1.26's fuzz coordinator
# may report its own -fuzztime deadline as a failure ("context deadline
# exceeded", go.dev/issue/75804, fixed in Go 1.27): a run whose only
# complaint is that, and that wrote no failing input, is not a failure.
fuzz:
	@set -e; out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -r -n1 dirname | sort -u); do \
		for f in $$($(GO) test -list '^Fuzz' $$dir | grep '^Fuzz'); do \
			echo "== $$dir $$f"; \
			before=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
			if $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$dir >"$$out" 2>&1; then \
				tail -n 2 "$$out"; continue; \
			fi; \
			cat "$$out"; \
			after=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
			if [ "$$after" = "$$before" ] && [ "$$(grep -c -- '--- FAIL' "$$out")" = 1 ] && \
				grep -q '^    context deadline exceeded$$' "$$out"; then \
				echo "== $$f: Go's own -fuzztime deadline (go.dev/issue/75804), no failing input: not a failure"; \
				continue; \
			fi; \
			exit 1; \
		done; \
	done

# docs/configuration.md's directive table is rendered from the table in
# server/config.go; go test ./server fails when the two differ.
docs:
	$(GO) test ./server -run '^TestConfigDoc$$' -update-config-doc

lint:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck ./...; else echo "staticcheck not installed; skipped"; fi

clean:
	rm -rf bin
