package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/eddy-streams/eddy/bridge"
	"github.com/eddy-streams/eddy/replication"
	"github.com/eddy-streams/eddy/server"
	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
)

// serverOptions is what `eddy server` was asked to do.
type serverOptions struct {
	configFile string // "" none, "-" stdin
	flags      []serverFlag
	help       bool
}

// serverFlag is one `--directive value...` from the command line.
type serverFlag struct {
	name string
	args []string
}

// parseServerFlags splits `[CONFIG-FILE] [--directive value ...]`. As with
// redis-server, a flag takes every argument up to the next one starting
// with "--" (`--bind 127.0.0.1 ::1`), or one value after '='
// (`--port=7000`). It does not know the directives; that is
// serverOptions.config's job.
func parseServerFlags(args []string) (serverOptions, error) {
	var o serverOptions
	for i, a := range args {
		// "--help" can never be a value (values do not start with "--");
		// -h only counts in first place, where no value can be.
		if a == "--help" || i == 0 && (a == "-h" || a == "-help") {
			o.help = true
			return o, nil
		}
	}
	i := 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		o.configFile = args[0]
		i = 1
	}
	for i < len(args) {
		a := args[i]
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			return o, fmt.Errorf("unexpected argument %q (the config file, if any, comes first; directives are --name value)", a)
		}
		name := a[2:]
		i++
		var vals []string
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, vals = name[:k], []string{name[k+1:]}
		} else {
			for i < len(args) && !strings.HasPrefix(args[i], "--") {
				vals = append(vals, args[i])
				i++
			}
		}
		if len(vals) == 0 {
			return o, fmt.Errorf("flag --%s: missing value", name)
		}
		o.flags = append(o.flags, serverFlag{name: name, args: vals})
	}
	return o, nil
}

// config builds the server's Config: defaults, then the config file, then
// the flags in order, so flags win.
func (o serverOptions) config(stdin io.Reader) (server.Config, error) {
	cfg := server.DefaultConfig()
	if o.configFile != "" {
		if err := loadConfigFile(o.configFile, stdin, &cfg); err != nil {
			return cfg, err
		}
	}
	for _, f := range o.flags {
		if err := cfg.Set(f.name, f.args...); err != nil {
			return cfg, fmt.Errorf("flag --%s: %w", f.name, err)
		}
	}
	return cfg, nil
}

func loadConfigFile(path string, stdin io.Reader, cfg *server.Config) error {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("config file: %w", err)
		}
		defer f.Close()
		r = f
	}
	if err := server.ParseConfigFile(r, cfg); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// serverConfig is the parsing half of `eddy server`, apart so tests reach
// every usage error without starting a server. When stop is true the
// command is over (help printed, or a usage error reported) and exits with
// code.
func serverConfig(args []string, e env) (cfg server.Config, code int, stop bool) {
	o, err := parseServerFlags(args)
	if err == nil && o.help {
		printServerUsage(e.stdout)
		return cfg, exitOK, true
	}
	if err == nil {
		cfg, err = o.config(e.stdin)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "eddy server: %v\n", err)
		fmt.Fprintln(e.stderr, `Run "eddy help server" for the list of directives.`)
		return cfg, exitUsage, true
	}
	cfg.Version = eddyVersion() // INFO reports what `eddy --version` prints
	return cfg, exitOK, false
}

// runServer is `eddy server`: parse, start, log the address, serve until
// ctx is cancelled (SIGINT/SIGTERM), then shut down cleanly.
func runServer(ctx context.Context, args []string, e env) int {
	cfg, code, stop := serverConfig(args, e)
	if stop {
		return code
	}
	level := new(slog.LevelVar)
	level.Set(cfg.SlogLevel())
	cfg.LogLevelVar = level // CONFIG SET loglevel then takes effect at once
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))

	parts, db, err := openParts(cfg, logger)
	if err != nil {
		logger.Error("eddy failed to start", "err", err)
		return exitError
	}
	code = serve(ctx, cfg, parts, logger)
	if err := db.Close(); err != nil {
		logger.Error("closing the store failed", "err", err)
		return exitError
	}
	return code
}

// openParts opens what the server serves, wired as the layers allow
// (docs/architecture.md): the store in cfg.Dir, which owns durability,
// the stream engine over it, and the replication log the engine feeds
// with every batch it applies. The caller closes the store.
func openParts(cfg server.Config, logger *slog.Logger) (server.Parts, *storage.DB, error) {
	mode, err := storage.ParseSyncMode(cfg.AppendFsync)
	if err != nil {
		return server.Parts{}, nil, err
	}
	db, err := storage.Open(storage.Options{Dir: cfg.Dir, CacheSize: cfg.CacheSize, Sync: mode, Logger: logger})
	if err != nil {
		return server.Parts{}, nil, err
	}
	log := replication.NewLog(int(cfg.ReplBacklogSize))
	opts := cfg.EngineOptions()
	opts.OnApply = log.AppendBatch
	opts.Logger = logger
	eng, err := stream.Open(db, opts)
	if err != nil {
		db.Close()
		return server.Parts{}, nil, err
	}
	return server.Parts{Engine: eng, ReplLog: log}, db, nil
}

// serve runs the RESP server and the NATS bridge over parts until ctx is
// cancelled or SHUTDOWN; both have stopped using the store when it
// returns.
func serve(ctx context.Context, cfg server.Config, parts server.Parts, logger *slog.Logger) int {
	srv, err := server.New(cfg, parts, logger)
	if err != nil {
		logger.Error("eddy failed to start", "err", err)
		return exitError
	}
	br, err := startBridge(ctx, cfg, parts.Engine, srv, logger)
	if err != nil {
		logger.Error("nats bridge failed to start", "err", err)
		// Serve with a cancelled context only closes the listeners.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_ = srv.Serve(cctx)
		return exitError
	}
	if br != nil {
		defer br.Close() // after the RESP clients are gone
		// tests/ parses this line for the NATS address; keep its shape.
		logger.Info("nats bridge ready", "url", br.URL())
	}
	// tests/ parses this line for the address; keep its shape.
	logger.Info("eddy ready", "addr", srv.Addr().String())
	if err := srv.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		logger.Error("eddy stopped with an error", "err", err)
		return exitError
	}
	logger.Info("eddy stopped")
	return exitOK
}

// defaultNatsPort is nats-port's default; see startBridge.
const defaultNatsPort = 4222

// startBridge starts the NATS bridge as cfg asks; nil when it is off.
// With an external server (nats-url) the bridge serves under a JetStream
// domain, "eddy" unless nats-domain names another, because that server
// may run JetStream of its own on $JS.API. The default port being taken
// (a nats-server already running here, or another Eddy) is a warning,
// not a failure: the bridge is optional and on by default.
func startBridge(ctx context.Context, cfg server.Config, eng *stream.Engine, srv *server.Server, logger *slog.Logger) (*bridge.Bridge, error) {
	bc := bridge.Config{
		URL:     cfg.NatsURL,
		Creds:   cfg.NatsCreds,
		Domain:  cfg.NatsDomain,
		LeafURL: cfg.NatsLeaf,
		Host:    cfg.NatsBind,
		Port:    cfg.NatsPort,
		Logger:  logger,
	}
	if bc.URL == "" && bc.Port == 0 {
		return nil, nil
	}
	if bc.URL != "" && bc.Domain == "" {
		bc.Domain = "eddy"
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	br, err := bridge.Start(ctx, bc, bridge.EngineStore{Engine: eng})
	if err == nil {
		srv.OnAppend(br.Appended) // consumers deliver new entries at once
	}
	if err != nil && bc.URL == "" && bc.Port == defaultNatsPort && errors.Is(err, syscall.EADDRINUSE) {
		logger.Warn("nats bridge off: its default port is in use; set nats-port", "port", bc.Port, "err", err)
		return nil, nil
	}
	return br, err
}

func printServerUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: eddy server [CONFIG-FILE] [--directive value ...]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CONFIG-FILE is in redis.conf syntax (\"-\" reads stdin). Every directive is")
	fmt.Fprintln(w, "also a flag; flags override the file. Examples:")
	fmt.Fprintln(w, "  eddy server --port 7000 --dir /var/lib/eddy --appendfsync always")
	fmt.Fprintln(w, "  eddy server eddy.conf --bind \"127.0.0.1 ::1\"")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Directives (* = CONFIG SET may change it at runtime):")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, d := range server.ConfigDirectives() {
		mark := " "
		if d.Runtime {
			mark = "*"
		}
		def := d.Default
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(tw, "  --%s\t%s\t%s %s\n", d.Name, def, mark, d.Usage)
	}
	tw.Flush()
}
