# Eddy's build. Every target works from a clean checkout with only Go
# installed; `make test` also wants redis-server for the differential tests
# (.ci/run installs it).
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

.PHONY: all build run test portable testrace bench bench-compare fuzz lint clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/eddy

# Defaults: 127.0.0.1:6379, store in ./data. Pass directives with ARGS,
# e.g. make run ARGS='--port 7000 --appendfsync always'.
run: build
	./$(BIN) server $(ARGS)

# tests/ builds bin/eddy with `go build` in its TestMain, which go test's
# cache cannot see: a cached pass would hide a change to the server, so
# that package always runs (-count=1).
test:
	$(GO) vet ./...
	$(MAKE) portable
	$(GO) test -timeout $(TIMEOUT) $$($(GO) list ./... | grep -v '/tests$$')
	$(GO) test -count=1 -timeout $(TIMEOUT) ./tests/

# Eddy is served and tested on Linux, but builds elsewhere (the event loop
# is Linux's; other systems serve each client on a goroutine): vet for
# macOS and Windows keeps it so.
portable:
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...

# The race detector needs cgo. tests/ always runs, as in test.
testrace:
	CGO_ENABLED=1 $(GO) test -race -timeout 30m $$($(GO) list ./... | grep -v '/tests$$')
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

lint:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck ./...; else echo "staticcheck not installed; skipped"; fi

clean:
	rm -rf bin
