#!/usr/bin/env bash
# compare.sh BASE: the Go benchmarks of the storage, stream and server
# packages on revision BASE and on the working tree (uncommitted edits
# included), then `benchstat base new`.
#
# The test binaries of both sides are built first, then run in turns, one
# -count at a time, alternating which side goes first: on a noisy 2-core
# machine a slow spell then hits both sides alike instead of one whole
# side. BASE is checked out with `git worktree add` into a temporary
# directory, removed on exit.
#
# Environment: COUNT (runs per benchmark, default 10), BENCH (-bench
# regexp, default '.'), PKGS (default "storage stream server"), GO
# (default go), BENCHSTAT (path of benchstat; default: PATH, then
# ~/go/bin, else it is installed with go install), OUT (directory to keep
# base.txt and new.txt in; default: a temporary one, removed).
set -euo pipefail
trap 'echo "bench-compare: line $LINENO failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."

BASE=${1:-${BASE:-}}
[ -n "$BASE" ] || { echo "usage: bench/compare.sh BASE (or make bench-compare BASE=<rev>)" >&2; exit 2; }
COUNT=${COUNT:-10}
BENCH=${BENCH:-.}
PKGS=${PKGS:-storage stream server}
GO=${GO:-go}

rev=$(git rev-parse --verify "$BASE^{commit}") || { echo "bench-compare: unknown revision $BASE" >&2; exit 2; }

if [ -n "${BENCHSTAT:-}" ]; then
	:
elif command -v benchstat >/dev/null; then
	BENCHSTAT=benchstat
elif [ -x "$HOME/go/bin/benchstat" ]; then
	BENCHSTAT=$HOME/go/bin/benchstat
else
	echo "bench-compare: installing benchstat" >&2
	"$GO" install golang.org/x/perf/cmd/benchstat@latest
	BENCHSTAT=$("$GO" env GOPATH)/bin/benchstat
fi

work=$(mktemp -d)
worktree=$work/base
cleanup() {
	if [ -d "$worktree" ]; then
		git worktree remove --force "$worktree" >/dev/null 2>&1 || true
	fi
	git worktree prune >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

git worktree add --detach --quiet "$worktree" "$rev"

# build SIDE TREE: a test binary per package into $work/SIDE/, or none
# when the package does not exist (or has no tests) at that side.
build() {
	local side=$1 tree=$2 p
	mkdir -p "$work/$side"
	for p in $PKGS; do
		[ -d "$tree/$p" ] || { echo "bench-compare: $side has no $p/; skipped there" >&2; continue; }
		(cd "$tree" && "$GO" test -c -o "$work/$side/$p.test" "./$p/")
	done
}
echo "bench-compare: building base ($(git rev-parse --short "$rev")) and working tree" >&2
build base "$worktree"
build new "$PWD"

# run SIDE TREE: one -count of every package's benchmarks, appended to
# $work/SIDE.txt. A binary runs in its package's directory, as go test
# runs it, so testdata/ resolves.
run() {
	local side=$1 tree=$2 p
	for p in $PKGS; do
		[ -x "$work/$side/$p.test" ] || continue
		(cd "$tree/$p" && "$work/$side/$p.test" -test.run '^$' -test.bench "$BENCH" \
			-test.benchmem -test.count 1) >>"$work/$side.txt"
	done
}
: >"$work/base.txt"
: >"$work/new.txt"
for i in $(seq 1 "$COUNT"); do
	echo "bench-compare: round $i/$COUNT" >&2
	if [ $((i % 2)) = 1 ]; then
		run base "$worktree"
		run new "$PWD"
	else
		run new "$PWD"
		run base "$worktree"
	fi
done

if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	cp "$work/base.txt" "$work/new.txt" "$OUT/"
fi
(cd "$work" && "$BENCHSTAT" base.txt new.txt)
