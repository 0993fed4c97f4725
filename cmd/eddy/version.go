package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is stamped at build time (-ldflags "-X main.version=v1.2.3";
// the Makefile and the Dockerfile stamp `git describe`). Unstamped, see
// eddyVersion.
var version string

// eddyVersion is the one version this binary reports: by `eddy version`
// (and --version, -v) and, through server.Config.Version, by INFO's
// eddy_version.
func eddyVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return resolveVersion(version, bi)
}

// resolveVersion prefers the stamped version; a plain `go build` or `go
// install` has none, and then the module version the go command recorded
// (a tag, or a pseudo-version naming the commit when VCS stamping is on)
// is the best there is. Without either, "dev".
func resolveVersion(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// runVersion prints `eddy <version> (<go version>)`. It takes no arguments.
func runVersion(_ context.Context, args []string, e env) int {
	if len(args) != 0 {
		fmt.Fprintf(e.stderr, "eddy version: unexpected argument %q\n", args[0])
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "eddy %s (%s)\n", eddyVersion(), runtime.Version())
	return exitOK
}
