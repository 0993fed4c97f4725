package server

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

func TestDefaultConfig(t *testing.T) {
	got := DefaultConfig()
	want := Config{
		Bind:                 []string{"127.0.0.1"},
		Port:                 6379,
		Dir:                  "./data",
		AppendFsync:          "everysec",
		Databases:            16,
		MaxClients:           10000,
		StreamNodeMaxEntries: 100,
		StreamNodeMaxBytes:   4096,
		CacheSize:            64 << 20,
		MetaCacheKeys:        stream.DefaultMetaCacheKeys,
		LogLevel:             "notice",
		ProtoMaxBulkLen:      512 << 20,
		NatsPort:             4222,
		NatsBind:             "127.0.0.1",
		ReplBacklogSize:      1 << 20,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DefaultConfig() = %+v\nwant %+v", got, want)
	}
}

func TestParseConfigFile(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		check   func(c Config) bool
		wantErr string // substring; "" means success
	}{
		{"empty", "", func(c Config) bool { return reflect.DeepEqual(c, DefaultConfig()) }, ""},
		{"comments and blanks", "# a comment\n\n   \n  # indented comment\nport 7000\n",
			func(c Config) bool { return c.Port == 7000 }, ""},
		{"crlf and tabs", "\tport\t7001\r\n", func(c Config) bool { return c.Port == 7001 }, ""},
		{"case-insensitive name", "PORT 7002\nAppendFsync ALWAYS\n",
			func(c Config) bool { return c.Port == 7002 && c.AppendFsync == "always" }, ""},
		{"last one wins", "port 1\nport 2\n", func(c Config) bool { return c.Port == 2 }, ""},
		{"double quotes and escapes", `requirepass "a\x41b\tc\n"`,
			func(c Config) bool { return c.RequirePass == "aAb\tc\n" }, ""},
		{"single quotes", `requirepass 'it\'s here'`,
			func(c Config) bool { return c.RequirePass == "it's here" }, ""},
		{"empty quoted", `requirepass ""`, func(c Config) bool { return c.RequirePass == "" }, ""},
		{"bind several", "bind 127.0.0.1 ::1 localhost",
			func(c Config) bool { return reflect.DeepEqual(c.Bind, []string{"127.0.0.1", "::1", "localhost"}) }, ""},
		{"bind one quoted list", `bind "127.0.0.1 ::1"`,
			func(c Config) bool { return reflect.DeepEqual(c.Bind, []string{"127.0.0.1", "::1"}) }, ""},
		{"memory units", "cache-size 1gb\nstream-node-max-bytes 4k\nproto-max-bulk-len 100MB\n",
			func(c Config) bool {
				return c.CacheSize == 1<<30 && c.StreamNodeMaxBytes == 4000 && c.ProtoMaxBulkLen == 100<<20
			}, ""},
		{"loglevel", "loglevel Warning", func(c Config) bool { return c.LogLevel == "warning" }, ""},
		{"dir", "dir /var/lib/eddy", func(c Config) bool { return c.Dir == "/var/lib/eddy" }, ""},
		{"metadata cache", "meta-cache-keys 200000", func(c Config) bool { return c.MetaCacheKeys == 200000 }, ""},
		{"metadata cache off", "meta-cache-keys 0", func(c Config) bool { return c.MetaCacheKeys == 0 }, ""},
		{"metadata cache negative", "meta-cache-keys -1", nil, `bad value "-1" for directive "meta-cache-keys"`},
		{"nats bridge off", "nats-port 0", func(c Config) bool { return c.NatsPort == 0 }, ""},
		{"nats free port", "nats-port -1", func(c Config) bool { return c.NatsPort == -1 }, ""},
		{"nats external", "nats-url nats://10.0.0.1:4222\nnats-creds /etc/eddy/user.creds\nnats-domain hub\n",
			func(c Config) bool {
				return c.NatsURL == "nats://10.0.0.1:4222" && c.NatsCreds == "/etc/eddy/user.creds" && c.NatsDomain == "hub" && c.NatsPort == 4222
			}, ""},
		{"nats port out of range", "nats-port -2", nil, `bad value "-2" for directive "nats-port": argument must be between -1 and 65535 inclusive`},

		{"fixed facts", "save \"\"\nappendonly YES\nmaxmemory 0\nmaxmemory-policy noeviction\n",
			func(c Config) bool { return reflect.DeepEqual(c, DefaultConfig()) }, ""},
		{"no snapshots", `save "900 1"`, nil, `Eddy takes no snapshots, every write is persisted: save is always ""`},
		{"always persisted", "appendonly no", nil, `bad value "no" for directive "appendonly": Eddy always persists every write`},
		{"never evicts", "maxmemory-policy allkeys-lru", nil, "maxmemory-policy is always noeviction"},
		{"unknown directive", "port 1\nrdbcompression yes\n", nil, `line 2: unknown directive "rdbcompression"`},
		{"bad integer", "port abc", nil, `line 1: bad value "abc" for directive "port": argument couldn't be parsed into an integer`},
		{"port out of range", "port 70000", nil, `bad value "70000" for directive "port": argument must be between 0 and 65535 inclusive`},
		{"bad enum", "appendfsync sometimes", nil,
			`bad value "sometimes" for directive "appendfsync": argument(s) must be one of the following: everysec, always, no`},
		{"bad memory", "cache-size 1tb", nil, `bad value "1tb" for directive "cache-size": argument must be a memory value`},
		{"too many args", "port 1 2", nil, `line 1: directive "port": takes exactly one argument, got 2`},
		{"too few args", "requirepass", nil, `directive "requirepass": takes exactly one argument, got 0`},
		{"unbalanced", `requirepass "ab"cd`, nil, "line 1: unbalanced quotes"},
		{"unterminated", `requirepass "abc`, nil, "unbalanced quotes"},
		{"trailing comment is an argument, as in Redis", "port 1 # comment", nil, "takes exactly one argument"},
		{"bad bind", "bind 127.0.0.1 not/an/addr", nil, `"not/an/addr" is not an IP address or host name`},
		{"databases zero", "databases 0", nil, "argument must be between 1 and 2147483647 inclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			before := cfg
			err := ParseConfigFile(strings.NewReader(tt.in), &cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if !reflect.DeepEqual(cfg, before) {
					t.Fatalf("cfg changed on error: %+v", cfg)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !tt.check(cfg) {
				t.Fatalf("unexpected config: %+v", cfg)
			}
		})
	}
}

func TestSetUnknownIsSentinel(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Set("nosuch", "1"); !errors.Is(err, ErrUnknownDirective) {
		t.Fatalf("err = %v, want ErrUnknownDirective", err)
	}
}

// The expected results were read from redis-server 7.0.15 with the same
// config line (via CONFIG GET dbfilename).
func TestSplitConfigArgs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"   ", nil, false},
		{"a b  c", []string{"a", "b", "c"}, false},
		{`"a\x41b\tc"`, []string{"aAb\tc"}, false},
		{`'it\'s'`, []string{"it's"}, false},
		{`ab"cd"`, []string{"abcd"}, false},
		{`a'b c'`, []string{"ab c"}, false},
		{`"x\x4"`, []string{"xx4"}, false},
		{`"q\q"`, []string{"qq"}, false},
		{`"\n\r\t\b\a\\\""`, []string{"\n\r\t\b\a\\\""}, false},
		{`'a\nb'`, []string{`a\nb`}, false},
		{`"" x`, []string{"", "x"}, false},
		{`"ab"cd`, nil, true},
		{`'ab'cd`, nil, true},
		{`"abc`, nil, true},
		{`'abc`, nil, true},
		{`"abc\`, nil, true},
	}
	for _, tt := range tests {
		got, err := splitConfigArgs(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("splitConfigArgs(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitConfigArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Each case was run against redis-server 7.0.15 with CONFIG SET stream-node-max-bytes.
func TestParseConfigMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"4096", 4096, true},
		{"1k", 1000, true},
		{"1kb", 1024, true},
		{"1KB", 1024, true},
		{"1Kb", 1024, true},
		{"2m", 2000000, true},
		{"2mb", 2 << 20, true},
		{"3g", 3000000000, true},
		{"3gb", 3 << 30, true},
		{"7b", 7, true},
		{"05k", 5000, true},
		{"k", 0, true},
		{"", 0, true},
		{"9007199254740992k", 9007199254740992000, true},
		// Redis reads these as negative and the range check refuses them.
		{"18446744073709551615", -1, true},
		{"184467440737095516150", -1, true},
		{"1.5k", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1tb", 0, false},
		{"1kbb", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseConfigMemory(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseConfigMemory(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestConfigMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "port", true},
		{"p?rt", "port", true},
		{"P*T", "port", true},
		{"stream*", "stream-node-max-bytes", true},
		{"*max*", "maxclients", true},
		{"[pq]ort", "port", true},
		{"[^pq]ort", "port", false},
		{"ti[^a]eout", "timeout", true},
		{"appendfs[x-z]nc", "appendfsync", true},
		{"appendfs[z-x]nc", "appendfsync", true},
		{"p\\ort", "port", true},
		{"p\\*rt", "port", false},
		{"port?", "port", false},
		{"**", "", true},
		{"?", "", false},
	}
	for _, tt := range tests {
		if got := configMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("configMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// Expected replies were read from redis-server 7.0.15 (values set to ours).
func TestConfigGet(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Dir = "/var/lib/eddy"
	tests := []struct {
		patterns []string
		want     [][2]string
	}{
		{[]string{"port"}, [][2]string{{"port", "6379"}}},
		// An exact name answers under the spelling asked for.
		{[]string{"PORT"}, [][2]string{{"PORT", "6379"}}},
		{[]string{"PORT", "port"}, [][2]string{{"PORT", "6379"}}},
		{[]string{"p?rt", "PORT"}, [][2]string{{"port", "6379"}}},
		{[]string{"nosuch"}, nil},
		// Only * ? [ make a glob; a backslash alone is an exact (failing) lookup.
		{[]string{`p\ort`}, nil},
		{[]string{"STREAM*"}, [][2]string{{"stream-node-max-entries", "100"}, {"stream-node-max-bytes", "4096"}}},
		{[]string{"stream*", "port", "stream-node-max-bytes"},
			[][2]string{{"stream-node-max-entries", "100"}, {"stream-node-max-bytes", "4096"}, {"port", "6379"}}},
		{[]string{"bind", "dir", "appendfsync", "databases", "requirepass", "maxclients"},
			[][2]string{{"bind", "127.0.0.1"}, {"dir", "/var/lib/eddy"}, {"appendfsync", "everysec"},
				{"databases", "16"}, {"requirepass", ""}, {"maxclients", "10000"}}},
		{[]string{"loglevel", "proto-max-bulk-len", "timeout", "cache-size"},
			[][2]string{{"loglevel", "notice"}, {"proto-max-bulk-len", "536870912"}, {"timeout", "0"},
				{"cache-size", "67108864"}}},
	}
	for _, tt := range tests {
		if got := cfg.GetMany(tt.patterns...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("GetMany(%q) = %q, want %q", tt.patterns, got, tt.want)
		}
	}
	if got := cfg.Get("*"); len(got) != len(configTable) {
		t.Errorf("Get(*) returned %d pairs, want %d", len(got), len(configTable))
	}
	cfg.Bind = []string{"127.0.0.1", "::1"}
	if got := cfg.Get("bind"); got[0][1] != "127.0.0.1 ::1" {
		t.Errorf("bind = %q, want space-joined", got[0][1])
	}
}

func TestConfigGetDirIsAbsolute(t *testing.T) {
	cfg := DefaultConfig()
	want, err := filepath.Abs("./data")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Get("dir")[0][1]; got != want {
		t.Fatalf("dir = %q, want %q", got, want)
	}
}

// Every error text below was read from redis-server 7.0.15.
func TestConfigSetRuntime(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
		check   func(c Config) bool
	}{
		{[]string{"foo", "bar"}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[]string{"Foo", "1"}, "ERR Unknown option or number of arguments for CONFIG SET - 'Foo'", nil},
		{[]string{"appendfsync", "bad"},
			"ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no", nil},
		{[]string{"APPENDFSYNC", ""},
			"ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no", nil},
		{[]string{"databases", "3"}, "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config", nil},
		{[]string{"DATABASES", "1"}, "ERR CONFIG SET failed (possibly related to argument 'DATABASES') - can't set immutable config", nil},
		{[]string{"port", "1"}, "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config", nil},
		{[]string{"bind", "0.0.0.0"}, "ERR CONFIG SET failed (possibly related to argument 'bind') - can't set immutable config", nil},
		{[]string{"dir", "/tmp"}, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set immutable config", nil},
		{[]string{"meta-cache-keys", "5"}, "ERR CONFIG SET failed (possibly related to argument 'meta-cache-keys') - can't set immutable config", nil},
		{[]string{"maxclients", "abc"},
			"ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer", nil},
		{[]string{"maxclients", "0"},
			"ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive", nil},
		{[]string{"stream-node-max-bytes", "1.5k"},
			"ERR CONFIG SET failed (possibly related to argument 'stream-node-max-bytes') - argument must be a memory value", nil},
		{[]string{"stream-node-max-bytes", "18446744073709551615"},
			"ERR CONFIG SET failed (possibly related to argument 'stream-node-max-bytes') - argument must be between 0 and 9223372036854775807 inclusive", nil},
		{[]string{"stream-node-max-entries", "-1"},
			"ERR CONFIG SET failed (possibly related to argument 'stream-node-max-entries') - argument must be between 0 and 9223372036854775807 inclusive", nil},
		{[]string{"stream-node-max-entries", "1e3"},
			"ERR CONFIG SET failed (possibly related to argument 'stream-node-max-entries') - argument couldn't be parsed into an integer", nil},
		{[]string{"proto-max-bulk-len", "1"},
			"ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive", nil},
		{[]string{"timeout", "-1"},
			"ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive", nil},
		{[]string{"timeout", "05"},
			"ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer", nil},
		{[]string{"loglevel", "foo"},
			"ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: debug, verbose, notice, warning", nil},
		// Several pairs: unknown names first, then immutable/duplicate names as spelled, then values.
		{[]string{"timeout", "1", "timeout", "2"}, "ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter", nil},
		{[]string{"timeout", "1", "Timeout", "2"}, "ERR CONFIG SET failed (possibly related to argument 'Timeout') - duplicate parameter", nil},
		{[]string{"timeout", "abc", "foo", "1"}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[]string{"databases", "1", "foo", "1"}, "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config", nil},
		{[]string{"foo", "1", "databases", "1"}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[]string{"timeout", "1", "timeout", "2", "databases", "3"},
			"ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter", nil},
		{[]string{"timeout", "abc", "maxclients", "0"},
			"ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer", nil},
		{[]string{"timeout", "1", "maxclients"}, "ERR syntax error", nil},

		{[]string{"appendfsync", "ALWAYS"}, "", func(c Config) bool { return c.AppendFsync == "always" }},
		{[]string{"loglevel", "WARNING"}, "", func(c Config) bool { return c.LogLevel == "warning" }},
		{[]string{"timeout", "5", "maxclients", "100"}, "", func(c Config) bool { return c.Timeout == 5 && c.MaxClients == 100 }},
		{[]string{"stream-node-max-bytes", "1kb"}, "", func(c Config) bool { return c.StreamNodeMaxBytes == 1024 }},
		{[]string{"stream-node-max-bytes", "05k"}, "", func(c Config) bool { return c.StreamNodeMaxBytes == 5000 }},
		{[]string{"proto-max-bulk-len", "1gb"}, "", func(c Config) bool { return c.ProtoMaxBulkLen == 1<<30 }},
		{[]string{"requirepass", "a b"}, "", func(c Config) bool { return c.RequirePass == "a b" }},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		before := cfg
		err := cfg.SetRuntimeMany(tt.args...)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("CONFIG SET %q: err = %v\nwant %s", tt.args, err, tt.wantErr)
			}
			if !reflect.DeepEqual(cfg, before) {
				t.Errorf("CONFIG SET %q: config changed on error", tt.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("CONFIG SET %q: %v", tt.args, err)
			continue
		}
		if !tt.check(cfg) {
			t.Errorf("CONFIG SET %q: unexpected config %+v", tt.args, cfg)
		}
	}
}

func TestConfigSetRuntimeAllOrNothing(t *testing.T) {
	cfg := DefaultConfig()
	err := cfg.SetRuntimeMany("timeout", "5", "maxclients", "0")
	if err == nil {
		t.Fatal("want an error")
	}
	if cfg.Timeout != 0 {
		t.Fatalf("timeout = %d after a failed CONFIG SET, want 0", cfg.Timeout)
	}
}

func TestConfigSetLogLevelVar(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LogLevelVar = new(slog.LevelVar)
	for _, tt := range []struct {
		name string
		want slog.Level
	}{
		{"debug", slog.LevelDebug},
		{"verbose", slog.LevelDebug + 2},
		{"warning", slog.LevelWarn},
		{"notice", slog.LevelInfo},
	} {
		if err := cfg.SetRuntime("loglevel", tt.name); err != nil {
			t.Fatal(err)
		}
		if got := cfg.LogLevelVar.Level(); got != tt.want {
			t.Errorf("loglevel %s: LevelVar = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLiveConfigConcurrent(t *testing.T) {
	live := NewLiveConfig(DefaultConfig())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 200 {
				if err := live.Set("timeout", "1", "maxclients", "2"); err != nil {
					t.Error(err)
					return
				}
				if err := live.Set("timeout", "0", "maxclients", "10000"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				// Both fields change in one CONFIG SET, so a snapshot sees both or neither.
				s := live.Snapshot()
				if (s.Timeout == 1) != (s.MaxClients == 2) {
					t.Errorf("torn snapshot: timeout %d maxclients %d", s.Timeout, s.MaxClients)
					return
				}
				_ = live.Get("timeout", "maxclients")
			}
		}()
	}
	wg.Wait()
}

// FuzzSplitConfigArgs checks that splitting never panics and that any
// split result, quoted back with escapes, splits to the same arguments.
func FuzzSplitConfigArgs(f *testing.F) {
	for _, s := range []string{`port 6379`, `requirepass "a\x41b\tc\n"`, `'it\'s'`, `ab"cd" e`, `"ab"cd`, "bind\t::1 \v x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, err := splitConfigArgs(line)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, a := range args {
			b.WriteString(` "`)
			for i := 0; i < len(a); i++ {
				switch c := a[i]; {
				case c == '"' || c == '\\':
					b.WriteByte('\\')
					b.WriteByte(c)
				case c < 0x20 || c >= 0x7f:
					fmt.Fprintf(&b, `\x%02x`, c)
				default:
					b.WriteByte(c)
				}
			}
			b.WriteByte('"')
		}
		again, err := splitConfigArgs(b.String())
		if err != nil || !reflect.DeepEqual(again, args) {
			t.Fatalf("split(%q) = %q; requoted %q splits to %q, %v", line, args, b.String(), again, err)
		}
		cfg := DefaultConfig()
		_ = ParseConfigFile(strings.NewReader(line), &cfg)
	})
}

// TestConfigGetForTools answers what tools ask for when they connect:
// redis-benchmark gives up ("Could not fetch server CONFIG") unless save
// and appendonly come back as name/value pairs.
func TestConfigGetForTools(t *testing.T) {
	cfg := DefaultConfig()
	got := cfg.GetMany("save", "appendonly", "maxmemory", "maxmemory-policy", "databases")
	want := [][2]string{{"save", ""}, {"appendonly", "yes"}, {"maxmemory", "0"}, {"maxmemory-policy", "noeviction"}, {"databases", "16"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetMany = %q, want %q", got, want)
	}
	if err := cfg.SetRuntimeMany("save", "", "appendonly", "yes"); err != nil {
		t.Errorf("setting the fixed values again: %v", err)
	}
	const wantErr = `ERR CONFIG SET failed (possibly related to argument 'save') - Eddy takes no snapshots, every write is persisted: save is always ""`
	if err := cfg.SetRuntimeMany("save", "3600 1"); err == nil || err.Error() != wantErr {
		t.Errorf("CONFIG SET save 3600 1: %v, want %s", err, wantErr)
	}
}

func TestReplicaOfDirective(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    string
		wantErr bool
	}{
		{in: []string{"127.0.0.1 6379"}, want: "127.0.0.1 6379"},
		{in: []string{"127.0.0.1", "7001"}, want: "127.0.0.1 7001"},
		{in: []string{"127.0.0.1"}, wantErr: true},
		{in: []string{"127.0.0.1", "port"}, wantErr: true},
		{in: []string{"127.0.0.1", "70000"}, wantErr: true},
	} {
		c := DefaultConfig()
		err := c.Set("replicaof", tc.in...)
		if (err != nil) != tc.wantErr || c.ReplicaOf != tc.want {
			t.Errorf("replicaof %q: got %q, %v; want %q (error %v)", tc.in, c.ReplicaOf, err, tc.want, tc.wantErr)
		}
	}
}
