#!/usr/bin/env bash
# Vets, for each GOOS/GOARCH given (default darwin/arm64 windows/amd64),
# the packages whose code differs from Linux's there: Eddy is served and
# tested on Linux (make test vets and tests everything there), and must
# still build elsewhere. A package differs when
#   - the files it builds differ from those it builds on Linux
#     (server/poll: poll_epoll.go against poll_kqueue.go, ...),
#   - it imports syscall, os/signal or golang.org/x/sys/..., whose
#     identifiers differ per OS (syscall.SIGTERM, syscall.EADDRINUSE), or
#   - go list reports it incomplete there (an import that does not build).
# Every other package is the same source on every OS, and Linux's vet has
# seen it. The dependencies still compile for the target, as vet needs
# them, but without optimisation (-N -l): nothing runs these objects, and
# a cold build takes a third less CPU so.
#
# Usage: tools/portable.sh [GOOS/GOARCH ...]   (GO names the go command)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(darwin/arm64 windows/amd64)

fmt='{{if .GoFiles}}{{.ImportPath}} {{.Incomplete}} {{join .GoFiles ","}} {{join .Imports ","}}{{end}}'
declare -A linux_files
while read -r pkg _ files _; do
	linux_files[$pkg]=$files
done < <(GOOS=linux GOARCH=amd64 $GO list -e -f "$fmt" ./...)

for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	pkgs=()
	while read -r pkg incomplete files imports; do
		if [ "$files" != "${linux_files[$pkg]:-}" ] || [ "$incomplete" = true ] ||
			[[ ",$imports," =~ ,(syscall|os/signal|golang\.org/x/sys/[a-z0-9]+), ]]; then
			pkgs+=("$pkg")
		fi
	done < <(GOOS=$goos GOARCH=$goarch $GO list -e -f "$fmt" ./...)
	echo "GOOS=$goos GOARCH=$goarch go vet ${pkgs[*]#github.com/eddy-streams/eddy/}"
	GOOS=$goos GOARCH=$goarch $GO vet -gcflags='all=-N -l' "${pkgs[@]}"
done
