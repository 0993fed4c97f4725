package main

import (
	"context"
	"fmt"
	"io"
)

// runHelp prints the usage on stdout: help that was asked for is output,
// not an error. `eddy help server` shows the server's directives.
func runHelp(_ context.Context, args []string, e env) int {
	if len(args) > 0 && args[0] == "server" {
		printServerUsage(e.stdout)
		return exitOK
	}
	printUsage(e.stdout)
	return exitOK
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: eddy <subcommand> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Subcommands:")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "eddy help server" for the server's configuration directives,`)
	fmt.Fprintln(w, `"eddy compact --help" for compacting a store offline.`)
}
