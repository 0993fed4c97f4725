package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/eddy-streams/eddy/server"
	"github.com/eddy-streams/eddy/storage"
)

// compactOptions is what `eddy compact` was asked to do.
type compactOptions struct {
	dir string
}

func parseCompactFlags(args []string, e env) (compactOptions, error) {
	o := compactOptions{dir: server.DefaultConfig().Dir}
	fs := flag.NewFlagSet("eddy compact", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&o.dir, "dir", o.dir, "directory of the store (the server's --dir)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: eddy compact [--dir DIR]")
		fmt.Fprintln(e.stderr)
		fmt.Fprintln(e.stderr, "Compacts a stopped server's store: drops deleted data and rewrites")
		fmt.Fprintln(e.stderr, "every table into the bottom level, then prints the size before and after.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() != 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.dir == "" {
		return o, errors.New("--dir must not be empty")
	}
	return o, nil
}

// runCompact is `eddy compact`: open the store offline, compact all of
// it, close. A running server holds the store's lock, so this refuses to
// touch a store in use rather than race with it.
func runCompact(ctx context.Context, args []string, e env) int {
	o, err := parseCompactFlags(args, e)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "eddy compact: %v\n", err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := storage.Open(storage.Options{Dir: o.dir, Logger: logger})
	if err != nil {
		fmt.Fprintf(e.stderr, "eddy compact: %v\n", err)
		return exitError
	}
	before := db.DiskUsage()
	start := time.Now()
	err = db.Compact(ctx)
	after := db.DiskUsage()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "eddy compact: %s: %v\n", o.dir, err)
		return exitError
	}
	fmt.Fprintf(e.stdout, "compacted %s in %.1fs: %d bytes before, %d after\n",
		o.dir, time.Since(start).Seconds(), before, after)
	return exitOK
}
