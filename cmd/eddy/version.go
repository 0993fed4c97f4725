package main

import (
	"context"
	"fmt"
	"runtime"
)

// runVersion prints `eddy <version> (<go version>)`. It takes no arguments.
func runVersion(_ context.Context, args []string, e env) int {
	if len(args) != 0 {
		fmt.Fprintf(e.stderr, "eddy version: unexpected argument %q\n", args[0])
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "eddy %s (%s)\n", version, runtime.Version())
	return exitOK
}
