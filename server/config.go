package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/eddy-streams/eddy/stream"
)

// Config holds the server's settings, one typed field per directive.
//
// Config is plain data: copying it is cheap and a copy never changes under
// the holder, but a Config is not safe for concurrent use. The running
// server keeps its settings in a LiveConfig, which guards one Config with a
// mutex and hands out copies.
type Config struct {
	Bind                 []string // addresses to listen on; never mutated in place, only replaced
	Port                 int      // 0 picks a free port
	Dir                  string   // where the Pebble store lives
	AppendFsync          string   // always | everysec | no
	Databases            int
	RequirePass          string
	MaxClients           int
	StreamNodeMaxEntries int64
	StreamNodeMaxBytes   int64
	CacheSize            int64 // Pebble block cache, bytes
	MetaCacheKeys        int   // keys whose metadata the stream engine keeps decoded; 0 = none
	LogLevel             string
	ProtoMaxBulkLen      int64
	Timeout              int // idle client timeout, seconds; 0 = never

	// The NATS bridge (package bridge); cmd/eddy starts it.
	NatsPort   int    // embedded NATS server port; 0 = bridge off, -1 = a free port
	NatsBind   string // embedded NATS server address
	NatsURL    string // connect to this NATS server instead of embedding one
	NatsCreds  string // credentials file for NatsURL
	NatsDomain string // JetStream domain to serve under; "" = "eddy" with NatsURL, none without
	NatsLeaf   string // leafnode URL of the NatsURL server, for pushing consumers' messages

	// Replication (package replication): the primary to follow, empty on
	// a primary, and the bytes of log kept for partial resyncs.
	ReplicaOf       string // "host port"
	ReplBacklogSize int64
	MasterAuth      string // password a replica AUTHs with to its primary
	MasterUser      string // user for MasterAuth; "" = AUTH with the password alone

	// Version is the binary's version, reported as INFO's eddy_version;
	// cmd/eddy sets it to what `eddy --version` prints. Empty reports the
	// package's Version. Not a directive.
	Version string

	// LogLevelVar, when set, follows LogLevel: a successful CONFIG SET of
	// loglevel stores the new level in it, so a slog handler built on it
	// changes verbosity at runtime. It is wiring, not a directive; copies of
	// the Config share it on purpose.
	LogLevelVar *slog.LevelVar
}

// ErrUnknownDirective is returned (wrapped) by Set and ParseConfigFile for
// a directive name that is not in the table.
var ErrUnknownDirective = errors.New("unknown directive")

// CONFIG SET's reasons and reply formats are in errors.go.

// Limits Redis puts on the directives we share with it.
const (
	maxBindAddrs = 16 // Redis's CONFIG_BINDADDR_MAX
	maxInt32     = math.MaxInt32
	maxUint32    = math.MaxUint32
)

// configDirectiveSpec is one row of the configuration table: everything the config
// file, the command line, CONFIG GET and CONFIG SET need to know about it.
type configDirectiveSpec struct {
	name      string // lower case, as in redis.conf
	def       string // default, written as it would be in a config file
	usage     string // one line for `eddy help server`
	doc       string // Markdown for docs/configuration.md (configdoc.go) where usage is not enough
	immutable bool   // CONFIG SET refuses it (the store or listeners depend on it)
	value     configValue
}

// configValue parses arguments into a Config field and formats it back.
type configValue struct {
	multi bool                                 // one or more arguments (bind); otherwise exactly one
	fixed bool                                 // one value only (configFixed): a fact under Redis's name
	set   func(c *Config, args []string) error // error is the bare reason, e.g. errNotInteger
	get   func(c *Config) string               // as CONFIG GET shows it
}

// configTable is the single table of settings. Order is the order CONFIG GET
// with a pattern answers in (Redis answers in hash order, which differs per
// process, so clients cannot depend on any order).
var configTable = []configDirectiveSpec{
	{name: "bind", def: "127.0.0.1", immutable: true,
		usage: "addresses to listen on, space separated",
		value: configBind()},
	{name: "port", def: "6379", immutable: true,
		usage: "TCP port; 0 picks a free one",
		doc:   "TCP port; `0` picks a free one (logged in the `eddy ready` line)",
		value: configInt(0, 65535, func(c *Config) *int { return &c.Port })},
	{name: "dir", def: "./data", immutable: true,
		usage: "directory of the store: Pebble's files and the journal",
		doc:   "directory of the store: Pebble's files and the journal (`journal/`); see [durability](durability.md)",
		value: configDir()},
	{name: "appendfsync", def: "everysec",
		usage: "when a write reaches the disk: always (before the reply), everysec, no (left to the OS)",
		doc: "when a write reaches the disk: `always` (before the reply), `everysec` (in the background, " +
			"once a second and after each MiB written, so at most a second of writes is lost), `no` " +
			"(written within a second, synced when the OS decides); see [durability](durability.md)",
		value: configEnum(stream.SyncModes(), func(c *Config) *string { return &c.AppendFsync })},
	{name: "databases", def: "16", immutable: true,
		usage: "number of logical databases (SELECT 0..N-1)",
		value: configInt(1, maxInt32, func(c *Config) *int { return &c.Databases })},
	{name: "requirepass", def: "",
		usage: "password clients must AUTH with; empty disables AUTH",
		value: configText(func(c *Config) *string { return &c.RequirePass })},
	{name: "maxclients", def: "10000",
		usage: "most clients connected at once",
		value: configInt(1, maxUint32, func(c *Config) *int { return &c.MaxClients })},
	{name: "stream-node-max-entries", def: "100",
		usage: "most entries in one stream node; 0 = no limit",
		value: configInt(0, math.MaxInt64, func(c *Config) *int64 { return &c.StreamNodeMaxEntries })},
	{name: "stream-node-max-bytes", def: "4096",
		usage: "most bytes in one stream node; 0 = no limit",
		value: configMemory(0, math.MaxInt64, func(c *Config) *int64 { return &c.StreamNodeMaxBytes })},
	{name: "cache-size", def: "64mb", immutable: true,
		usage: "Pebble cache size, its 16 MB of memtables included (eddy only)",
		value: configMemory(0, math.MaxInt64, func(c *Config) *int64 { return &c.CacheSize })},
	{name: "meta-cache-keys", def: "100000", immutable: true,
		usage: "keys whose metadata is kept in memory, ~460 bytes each; 0 = none (eddy only)",
		doc: "keys whose metadata (length, last ID, tail node, …) the engine keeps decoded in memory, " +
			"about 460 bytes each and only as keys are used (a key read while missing is kept as " +
			"missing, so that reading it again costs no store read); `0` = none (Eddy only). Writes " +
			"to more active keys than this read each key's metadata from the store, which costs " +
			"them most of their rate (measured in bench/results/HISTORY.md, \"Writes to many streams\")",
		value: configInt(0, maxInt32, func(c *Config) *int { return &c.MetaCacheKeys })},
	{name: "loglevel", def: "notice",
		usage: "debug, verbose, notice or warning",
		value: configEnum([]string{"debug", "verbose", "notice", "warning"}, func(c *Config) *string { return &c.LogLevel })},
	{name: "proto-max-bulk-len", def: "512mb",
		usage: "largest bulk string a client may send",
		value: configMemory(1<<20, math.MaxInt64, func(c *Config) *int64 { return &c.ProtoMaxBulkLen })},
	{name: "timeout", def: "0",
		usage: "close a client idle this many seconds; 0 = never",
		value: configInt(0, maxInt32, func(c *Config) *int { return &c.Timeout })},
	{name: "nats-bind", def: "127.0.0.1", immutable: true,
		usage: "address the embedded NATS server listens on (eddy only)",
		doc:   "address the embedded NATS server listens on (`0.0.0.0` in the container image; Eddy only)",
		value: configText(func(c *Config) *string { return &c.NatsBind })},
	{name: "nats-port", def: "4222", immutable: true,
		usage: "port of the embedded NATS server (NATS bridge); 0 turns the bridge off, -1 picks a free port (eddy only)",
		doc: "port of the embedded NATS server for the [NATS bridge](nats.md); `0` turns the bridge off, " +
			"`-1` picks a free one (logged in the `nats bridge ready` line). If the default 4222 is " +
			"taken, Eddy warns and runs without the bridge; any other port that is taken is an error " +
			"(Eddy only)",
		value: configInt(-1, 65535, func(c *Config) *int { return &c.NatsPort })},
	{name: "nats-url", def: "", immutable: true,
		usage: "serve the NATS bridge on this NATS server (nats://host:port) instead of an embedded one (eddy only)",
		doc: "serve the bridge on this NATS server (`nats://host:port`, `tls://…`, user:pass in the URL) " +
			"instead of an embedded one (Eddy only)",
		value: configText(func(c *Config) *string { return &c.NatsURL })},
	{name: "nats-creds", def: "", immutable: true,
		usage: "credentials file for nats-url (eddy only)",
		doc:   "`.creds` file (user JWT + nkey seed) for `nats-url` (Eddy only)",
		value: configText(func(c *Config) *string { return &c.NatsCreds })},
	{name: "nats-domain", def: "", immutable: true,
		usage: `JetStream domain the bridge serves ($JS.<domain>.API); "" means eddy with nats-url, none without (eddy only)`,
		doc: "JetStream domain the bridge serves (`$JS.<domain>.API.…`); empty means `eddy` with " +
			"`nats-url`, none with the embedded server (Eddy only)",
		value: configText(func(c *Config) *string { return &c.NatsDomain })},
	{name: "nats-leaf-url", def: "", immutable: true,
		usage: "leafnode URL (nats://user:pass@host:7422) of the nats-url server, through which the bridge pushes consumers' messages (KV history, keys, watch); empty refuses consumers with nats-url (eddy only)",
		doc: "leafnode URL (`nats://user:pass@host:7422`) of the `nats-url` server, through which the " +
			"bridge pushes consumers' messages (KV `History`/`Keys`/`Watch`); empty refuses consumers " +
			"with `nats-url` (Eddy only)",
		value: configText(func(c *Config) *string { return &c.NatsLeaf })},
	{name: "replicaof", def: "", immutable: true,
		usage: `"host port" of the primary to follow at start (REPLICAOF changes it at run time); empty: serve as a primary`,
		doc: "`\"host port\"` of the primary to follow from start (`REPLICAOF` changes it at run time); " +
			"empty serves as a primary; see [replication](replication.md)",
		value: configReplicaOf()},
	{name: "repl-backlog-size", def: "1mb",
		usage: "bytes of replication log kept so that a replica that reconnects resyncs partially",
		value: configMemory(1, math.MaxInt64, func(c *Config) *int64 { return &c.ReplBacklogSize })},
	{name: "masterauth", def: "",
		usage: "password a replica sends (AUTH) to a primary with requirepass; used from the next connection",
		value: configText(func(c *Config) *string { return &c.MasterAuth })},
	{name: "masteruser", def: "",
		usage: "user a replica AUTHs as with masterauth; empty sends AUTH <masterauth> alone",
		doc:   "user a replica `AUTH`s as with `masterauth`; empty sends `AUTH <masterauth>` alone",
		value: configText(func(c *Config) *string { return &c.MasterUser })},
	// Fixed facts about Eddy under Redis's names, because tools ask for
	// them (redis-benchmark reads save and appendonly, BullMQ checks
	// maxmemory-policy) and a redis.conf may set them to these values.
	{name: "appendonly", def: "yes",
		usage: "always yes: every write is in the store's log, synced as appendfsync says (Redis compatibility)",
		value: configFixed("yes", "Eddy always persists every write: appendonly is always yes")},
	{name: "save", def: "",
		usage: `always "": no snapshots are taken, every write is persisted (Redis compatibility)`,
		value: configFixed("", `Eddy takes no snapshots, every write is persisted: save is always ""`)},
	{name: "maxmemory", def: "0",
		usage: "always 0: data lives on disk, memory is bounded by cache-size (Redis compatibility)",
		value: configFixed("0", "Eddy keeps data on disk: maxmemory is always 0, see cache-size")},
	{name: "maxmemory-policy", def: "noeviction",
		usage: "always noeviction: Eddy never evicts keys (Redis compatibility)",
		value: configFixed("noeviction", "Eddy never evicts keys: maxmemory-policy is always noeviction")},
}

func lookupConfigDirective(name string) *configDirectiveSpec {
	for i := range configTable {
		if nameIs(name, configTable[i].name) {
			return &configTable[i]
		}
	}
	return nil
}

// ConfigDirective describes one directive for help text and documentation.
type ConfigDirective struct {
	Name    string
	Default string
	Usage   string
	Runtime bool // CONFIG SET may change it
}

// ConfigDirectives lists every directive in table order.
func ConfigDirectives() []ConfigDirective {
	out := make([]ConfigDirective, len(configTable))
	for i, d := range configTable {
		out[i] = ConfigDirective{Name: d.name, Default: d.def, Usage: d.usage, Runtime: !d.immutable}
	}
	return out
}

// DefaultConfig returns the settings used when nothing is configured. The
// defaults are the table's default texts run through the same parsers as a
// config file, so the two cannot disagree.
func DefaultConfig() Config {
	var c Config
	for _, d := range configTable {
		args := []string{d.def}
		if d.value.multi {
			args = strings.Fields(d.def)
		}
		if err := d.value.set(&c, args); err != nil {
			panic(fmt.Sprintf("server: default of %q does not parse: %v", d.name, err))
		}
	}
	return c
}

// ParseConfigFile reads redis.conf syntax from r into cfg: one directive
// and its arguments per line, names case-insensitive, lines starting with #
// ignored, arguments quoted as Redis quotes them ("..." with \n \r \t \b \a
// \xHH escapes, '...' with \'). On error cfg is left unchanged and the error
// names the line.
func ParseConfigFile(r io.Reader, cfg *Config) error {
	next := *cfg
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.Trim(sc.Text(), " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		argv, err := splitConfigArgs(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		if len(argv) == 0 {
			continue
		}
		if err := next.Set(argv[0], argv[1:]...); err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	*cfg = next
	return nil
}

// Set applies one directive from a config file or the command line,
// immutable ones included. A multi-argument directive given one argument
// splits it as a config line would ("127.0.0.1 ::1").
func (c *Config) Set(name string, args ...string) error {
	d := lookupConfigDirective(name)
	if d == nil {
		return fmt.Errorf("%w %q", ErrUnknownDirective, name)
	}
	args, err := d.arguments(args)
	if err != nil {
		return fmt.Errorf("directive %q: %w", d.name, err)
	}
	if err := d.value.set(c, args); err != nil {
		return fmt.Errorf("bad value %q for directive %q: %w", strings.Join(args, " "), d.name, err)
	}
	return nil
}

// arguments checks the argument count and splits a lone argument of a
// multi-argument directive.
func (d *configDirectiveSpec) arguments(args []string) ([]string, error) {
	if !d.value.multi {
		if len(args) != 1 {
			return nil, fmt.Errorf("takes exactly one argument, got %d", len(args))
		}
		return args, nil
	}
	if len(args) == 1 {
		split, err := splitConfigArgs(args[0])
		if err != nil {
			return nil, err
		}
		args = split
	}
	if len(args) == 0 {
		return nil, errors.New("needs at least one argument")
	}
	return args, nil
}

// Get answers CONFIG GET for one pattern. A pattern without glob characters
// (* ? [) is looked up exactly and answered under the spelling asked for, as
// Redis does; a glob is matched case-insensitively and answered under the
// directives' own names, in table order. No match gives nil.
func (c *Config) Get(pattern string) [][2]string {
	if !strings.ContainsAny(pattern, "*?[") {
		if d := lookupConfigDirective(pattern); d != nil {
			return [][2]string{{pattern, d.value.get(c)}}
		}
		return nil
	}
	var out [][2]string
	for i := range configTable {
		if configMatch(pattern, configTable[i].name) {
			out = append(out, [2]string{configTable[i].name, configTable[i].value.get(c)})
		}
	}
	return out
}

// GetMany answers CONFIG GET with several patterns (Redis 7): each
// directive appears once, under the first spelling that matched it.
func (c *Config) GetMany(patterns ...string) [][2]string {
	var out [][2]string
	seen := make(map[*configDirectiveSpec]bool)
	for _, p := range patterns {
		for _, kv := range c.Get(p) {
			d := lookupConfigDirective(kv[0])
			if seen[d] {
				continue
			}
			seen[d] = true
			out = append(out, kv)
		}
	}
	return out
}

// SetRuntime is CONFIG SET of one directive; see SetRuntimeMany.
func (c *Config) SetRuntime(name, value string) error {
	return c.SetRuntimeMany(name, value)
}

// SetRuntimeMany is CONFIG SET name value [name value ...] with Redis 7.0
// semantics: all pairs apply or none does, and the error's text is the
// exact error reply (starting with "ERR "). As in Redis, an unknown name is
// reported before anything else; otherwise the first immutable or repeated
// name (spelled as given); values are checked only after all names pass,
// and a bad one is reported under the directive's own name.
func (c *Config) SetRuntimeMany(args ...string) error {
	if len(args) == 0 || len(args)%2 != 0 {
		return errConfigSetSyntax
	}
	n := len(args) / 2
	set := make([]*configDirectiveSpec, n)
	var unknown, badArg string
	var reason error
	for i := range n {
		name := args[2*i]
		d := lookupConfigDirective(name)
		if d == nil {
			if unknown == "" && reason == nil {
				unknown = name
			}
			continue
		}
		if unknown != "" || reason != nil {
			continue
		}
		if d.immutable {
			badArg, reason = name, errImmutableConfig
			continue
		}
		for j := range i {
			if set[j] == d {
				badArg, reason = name, errDuplicateConfig
				break
			}
		}
		set[i] = d
	}
	if unknown != "" {
		return fmt.Errorf(errConfigSetUnknown, unknown)
	}
	if reason != nil {
		return fmt.Errorf(errConfigSetFailed, badArg, reason)
	}

	next := *c
	for i, d := range set {
		vals := []string{args[2*i+1]}
		if d.value.multi {
			split, err := splitConfigArgs(vals[0])
			if err != nil {
				return fmt.Errorf(errConfigSetFailed, d.name, err)
			}
			vals = split
		}
		if err := d.value.set(&next, vals); err != nil {
			return fmt.Errorf(errConfigSetFailed, d.name, err)
		}
	}
	*c = next
	if c.LogLevelVar != nil {
		c.LogLevelVar.Set(c.SlogLevel())
	}
	return nil
}

// SlogLevel maps the Redis log level onto slog's scale; verbose sits
// between Debug and Info.
func (c *Config) SlogLevel() slog.Level {
	switch c.LogLevel {
	case "debug":
		return slog.LevelDebug
	case "verbose":
		return slog.LevelDebug + 2
	case "warning":
		return slog.LevelWarn
	default:
		return slog.LevelInfo
	}
}

// LiveConfig is the running server's Config, safe for concurrent use: a
// mutex inside, and readers get copies, so a value read once stays
// consistent for the whole command that read it.
type LiveConfig struct {
	mu  sync.RWMutex
	cfg Config // guarded by mu
}

// NewLiveConfig starts from cfg.
func NewLiveConfig(cfg Config) *LiveConfig {
	cfg.Bind = append([]string(nil), cfg.Bind...)
	return &LiveConfig{cfg: cfg}
}

// Snapshot returns a copy of the current settings. Bind is shared but
// never written in place, so the copy needs no lock.
func (l *LiveConfig) Snapshot() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// Get answers CONFIG GET pattern [pattern ...].
func (l *LiveConfig) Get(patterns ...string) [][2]string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg.GetMany(patterns...)
}

// Set answers CONFIG SET name value [name value ...]; the error text is the
// exact Redis reply.
func (l *LiveConfig) Set(args ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg.SetRuntimeMany(args...)
}

// configInt is a whole-number directive, parsed as strictly as Redis's
// string2ll: no sign other than a leading '-', no leading zeros, no spaces.
func configInt[T int | int64](lo, hi int64, field func(*Config) *T) configValue {
	return configValue{
		set: func(c *Config, args []string) error {
			n, ok := parseRedisInt([]byte(args[0]))
			if !ok {
				return errNotInteger
			}
			if n < lo || n > hi {
				return fmt.Errorf(errConfigRange, lo, hi)
			}
			*field(c) = T(n)
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(int64(*field(c)), 10) },
	}
}

// configMemory is a byte-count directive accepting Redis's units (see parseConfigMemory).
func configMemory(lo, hi int64, field func(*Config) *int64) configValue {
	return configValue{
		set: func(c *Config, args []string) error {
			n, ok := parseConfigMemory(args[0])
			if !ok {
				return errNotMemory
			}
			if n < lo || n > hi {
				return fmt.Errorf(errConfigRange, lo, hi)
			}
			*field(c) = n
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(*field(c), 10) },
	}
}

// configEnum accepts one of options, case-insensitively, and stores it in lower
// case. The options are listed in Redis's order, which its error text shows.
func configEnum(options []string, field func(*Config) *string) configValue {
	msg := errConfigEnumPrefix + strings.Join(options, ", ")
	return configValue{
		set: func(c *Config, args []string) error {
			for _, o := range options {
				if nameIs(args[0], o) {
					*field(c) = o
					return nil
				}
			}
			return errors.New(msg)
		},
		get: func(c *Config) string { return *field(c) },
	}
}

// configFixed is a directive with one possible value, which may be set
// again (case-insensitively); any other value fails with reason.
func configFixed(value, reason string) configValue {
	return configValue{
		set: func(_ *Config, args []string) error {
			if !nameIs(args[0], value) {
				return errors.New(reason)
			}
			return nil
		},
		get:   func(*Config) string { return value },
		fixed: true,
	}
}

// configText is a free-form string directive.
func configText(field func(*Config) *string) configValue {
	return configValue{
		set: func(c *Config, args []string) error { *field(c) = args[0]; return nil },
		get: func(c *Config) string { return *field(c) },
	}
}

// configDir is shown as an absolute path, because Redis answers CONFIG GET
// dir with its working directory after chdir-ing into it.
func configDir() configValue {
	return configValue{
		set: func(c *Config, args []string) error {
			if args[0] == "" {
				return errEmptyDir
			}
			c.Dir = args[0]
			return nil
		},
		get: func(c *Config) string {
			if abs, err := filepath.Abs(c.Dir); err == nil {
				return abs
			}
			return c.Dir
		},
	}
}

// configReplicaOf is "host port", or empty; the file form takes them as
// two arguments.
func configReplicaOf() configValue {
	return configValue{
		multi: true,
		set: func(c *Config, args []string) error {
			if len(args) == 0 || len(args) == 1 && args[0] == "" {
				c.ReplicaOf = ""
				return nil
			}
			if len(args) != 2 {
				return errors.New(`expected "host port"`)
			}
			if p, err := strconv.Atoi(args[1]); err != nil || p < 0 || p > 65535 {
				return errors.New("invalid master port")
			}
			c.ReplicaOf = args[0] + " " + args[1]
			return nil
		},
		get: func(c *Config) string { return c.ReplicaOf },
	}
}

func configBind() configValue {
	return configValue{
		multi: true,
		set: func(c *Config, args []string) error {
			if len(args) > maxBindAddrs {
				return fmt.Errorf(errConfigTooManyBind, maxBindAddrs)
			}
			for _, a := range args {
				if !validBindAddr(a) {
					return fmt.Errorf(errConfigBadBind, a)
				}
			}
			c.Bind = append([]string(nil), args...)
			return nil
		},
		get: func(c *Config) string { return strings.Join(c.Bind, " ") },
	}
}

// validBindAddr accepts IP literals (IPv6 zones included) and host names
// such as localhost; names are resolved when the server listens.
func validBindAddr(a string) bool {
	if _, err := netip.ParseAddr(a); err == nil {
		return true
	}
	if a == "" || len(a) > 253 || a[0] == '-' || a[0] == '.' {
		return false
	}
	for i := 0; i < len(a); i++ {
		b := a[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '.') {
			return false
		}
	}
	return true
}

// parseConfigMemory follows Redis 7.0's memtoull as CONFIG SET uses it: digits
// (leading zeros and none at all allowed) then an optional unit, b, k=1000,
// kb=1024, m, mb, g, gb, any case. Like Redis it saturates digits past
// 2^64-1, multiplies modulo 2^64 and reads the result as a signed 64-bit
// number, so huge values come out negative and fail the range check rather
// than the syntax check; this keeps every error text identical to Redis's.
func parseConfigMemory(s string) (int64, bool) {
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	var mul uint64
	switch lower([]byte(s[i:])) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	var n uint64
	if i > 0 {
		v, err := strconv.ParseUint(s[:i], 10, 64)
		if err != nil {
			v = math.MaxUint64 // strtoull saturates and memtoull ignores ERANGE
		}
		n = v
	}
	return int64(n * mul), true
}

// splitConfigArgs splits a config line the way Redis's sdssplitargs does: spaces
// separate arguments; "..." understands \xHH, \n, \r, \t, \b, \a and a
// backslash before any other character; '...' understands only \'; a
// closing quote must be followed by a space or the end of the line.
func splitConfigArgs(line string) ([]string, error) {
	var out []string
	p := 0
	for {
		for p < len(line) && isConfigSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return out, nil
		}
		var cur []byte
		inq, insq := false, false
	token:
		for {
			switch {
			case inq:
				if p == len(line) {
					return nil, errUnbalancedQuotes
				}
				ch := line[p]
				switch {
				case ch == '\\' && p+3 < len(line) && line[p+1] == 'x' && isConfigHex(line[p+2]) && isConfigHex(line[p+3]):
					b, _ := strconv.ParseUint(line[p+2:p+4], 16, 8)
					cur = append(cur, byte(b))
					p += 4
				case ch == '\\' && p+1 < len(line):
					p++
					switch e := line[p]; e {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, e)
					}
					p++
				case ch == '"':
					if p+1 < len(line) && !isConfigSpace(line[p+1]) {
						return nil, errUnbalancedQuotes
					}
					p++
					break token
				default:
					cur = append(cur, ch)
					p++
				}
			case insq:
				if p == len(line) {
					return nil, errUnbalancedQuotes
				}
				ch := line[p]
				switch {
				case ch == '\\' && p+1 < len(line) && line[p+1] == '\'':
					cur = append(cur, '\'')
					p += 2
				case ch == '\'':
					if p+1 < len(line) && !isConfigSpace(line[p+1]) {
						return nil, errUnbalancedQuotes
					}
					p++
					break token
				default:
					cur = append(cur, ch)
					p++
				}
			default:
				if p == len(line) {
					break token
				}
				switch ch := line[p]; ch {
				case ' ', '\n', '\r', '\t', 0:
					p++
					break token
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, ch)
				}
				p++
			}
		}
		out = append(out, string(cur))
	}
}

// isConfigSpace is C's isspace in the "C" locale.
func isConfigSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func isConfigHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// configMatch is Redis's stringmatchlen with nocase set, as CONFIG GET uses
// it: * and ? wildcards, [abc], [^abc], [a-z] classes, and \ escaping the
// next pattern character.
func configMatch(pattern, s string) bool {
	lower := func(b byte) byte {
		if b >= 'A' && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 1 && pattern[1] == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if configMatch(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
			pattern = pattern[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			pattern = pattern[1:]
			not := len(pattern) > 0 && pattern[0] == '^'
			if not {
				pattern = pattern[1:]
			}
			c := lower(s[0])
			match := false
			for len(pattern) > 0 && pattern[0] != ']' {
				switch {
				case pattern[0] == '\\' && len(pattern) >= 2:
					pattern = pattern[1:]
					if lower(pattern[0]) == c {
						match = true
					}
					pattern = pattern[1:]
				case len(pattern) >= 3 && pattern[1] == '-':
					lo, hi := lower(pattern[0]), lower(pattern[2])
					if lo > hi {
						lo, hi = hi, lo
					}
					if c >= lo && c <= hi {
						match = true
					}
					pattern = pattern[3:]
				default:
					if lower(pattern[0]) == c {
						match = true
					}
					pattern = pattern[1:]
				}
			}
			if len(pattern) > 0 {
				pattern = pattern[1:] // the closing ]
			}
			if match == not {
				return false
			}
			s = s[1:]
		case '\\':
			if len(pattern) >= 2 {
				pattern = pattern[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || lower(pattern[0]) != lower(s[0]) {
				return false
			}
			s = s[1:]
			pattern = pattern[1:]
		}
	}
	return len(s) == 0
}

// EngineOptions are the stream engine's options that the directives set
// (meta-cache-keys); the caller adds its own hooks (OnApply, Logger).
func (c Config) EngineOptions() stream.Options {
	keys := c.MetaCacheKeys
	if keys == 0 {
		keys = -1 // stream.Options: negative turns the cache off
	}
	return stream.Options{MetaCacheKeys: keys}
}
