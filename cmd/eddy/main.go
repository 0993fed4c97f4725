// Command eddy runs the Eddy server and its helper subcommands.
//
// Usage:
//
//	eddy server [CONFIG-FILE] [--directive value ...]
//	eddy compact [--dir DIR]
//	eddy version (also eddy --version, eddy -v)
//	eddy help
//
// Each subcommand lives in its own file: its options, flags, validation
// and run function. This file only dispatches.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the server failed while running
	exitUsage = 2 // bad subcommand, flag, directive or config file
)

// env is what a subcommand may touch of the process, so tests can supply
// their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// subcommand is one row of the CLI's table.
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, e env) int
}

func subcommands() []subcommand {
	return []subcommand{
		{"server", "run the server", runServer},
		{"compact", "compact a stopped server's store (--dir DIR)", runCompact},
		{"version", "print the version (also --version, -v)", runVersion},
		{"help", "show this help", runHelp},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, give the signals back to the runtime so a
		// second Ctrl-C kills a shutdown that hangs.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], env{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

// run dispatches to the subcommand named by args[0] and returns the exit code.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return runHelp(ctx, args[1:], e)
	case "-v", "--version": // what redis-server and most tools accept
		return runVersion(ctx, args[1:], e)
	}
	for _, c := range subcommands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], e)
		}
	}
	fmt.Fprintf(e.stderr, "eddy: unknown subcommand %q\n\n", args[0])
	printUsage(e.stderr)
	return exitUsage
}
