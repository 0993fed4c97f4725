package server

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

func TestSanitizeError(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ERR plain", "ERR plain"},
		{"ERR a\r\nb", "ERR a  b"},
		{"ERR \xff\r\xfe\n", "ERR \xff \xfe "},
		{"ERR \xf0\x9f\n\x98\x80", "ERR \xf0\x9f \x98\x80"}, // a split 4-byte sequence
		{"ERR \xc3\xa9\n", "ERR \xc3\xa9 "},                 // valid UTF-8 is untouched too
	}
	for _, c := range cases {
		if got := sanitizeError(c.in); got != c.want {
			t.Errorf("sanitizeError(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUnknownCommandText(t *testing.T) {
	long := strings.Repeat("x", 200)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"foo"}, "ERR unknown command 'foo', with args beginning with: "},
		{[]string{"foo", "a", "b"}, "ERR unknown command 'foo', with args beginning with: 'a' 'b' "},
		{[]string{long}, "ERR unknown command '" + long[:128] + "', with args beginning with: "},
		{[]string{"f", long, "b"}, "ERR unknown command 'f', with args beginning with: '" + long[:128] + "' "},
		{[]string{"f", strings.Repeat("y", 120), "abcdefghij", "z"}, "ERR unknown command 'f', with args beginning with: '" + strings.Repeat("y", 120) + "' 'abcde' "},
		{[]string{"f", "a\r\nb"}, "ERR unknown command 'f', with args beginning with: 'a  b' "},
		{[]string{"f", "a\x00b"}, "ERR unknown command 'f', with args beginning with: 'a' "},
		// Invalid UTF-8 next to CR/LF stays as sent: only CR and LF change.
		{[]string{"f", "\xff\r\n\xfe"}, "ERR unknown command 'f', with args beginning with: '\xff  \xfe' "},
		{[]string{"\xc3\n\x28"}, "ERR unknown command '\xc3 \x28', with args beginning with: "},
		{[]string{"f", "\xe2\x82"}, "ERR unknown command 'f', with args beginning with: '\xe2\x82' "},
	}
	for _, c := range cases {
		args := make([][]byte, len(c.args))
		for i, a := range c.args {
			args[i] = []byte(a)
		}
		if got := errUnknownCommand(args); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}

// TestDispatchChecks runs the dispatcher on a server without a store:
// every reply below is decided before a handler touches the engine.
func TestDispatchChecks(t *testing.T) {
	s := &Server{databases: 16}
	s.watch.init()
	s.blocks.init()
	s.stats.init()
	pass := ""
	s.requirePass.Store(&pass)
	s.buildTable(commandTable())
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"arity exact", []string{"GET"}, "-ERR wrong number of arguments for 'get' command\r\n"},
		{"arity min", []string{"DEL"}, "-ERR wrong number of arguments for 'del' command\r\n"},
		{"case", []string{"PiNg"}, "+PONG\r\n"},
		{"container alone", []string{"CLIENT"}, "-ERR wrong number of arguments for 'client' command\r\n"},
		{"subcommand arity", []string{"CLIENT SETNAME"}, "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		{"unknown subcommand", []string{"CONFIG FOO"}, "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"},
		{"queue", []string{"MULTI", "PING", "GET"}, "+OK\r\n+QUEUED\r\n-ERR wrong number of arguments for 'get' command\r\n"},
		{"no multi", []string{"MULTI", "SHUTDOWN"}, "+OK\r\n-ERR Command not allowed inside a transaction\r\n"},
		{"discard", []string{"MULTI", "DISCARD", "DISCARD"}, "+OK\r\n+OK\r\n-ERR DISCARD without MULTI\r\n"},
		{"quit", []string{"QUIT x y"}, "+OK\r\n"},
		{"echo", []string{"ECHO hi"}, "$2\r\nhi\r\n"},
		{"select", []string{"SELECT x", "SELECT -1", "SELECT 15"}, "-ERR value is not an integer or out of range\r\n-ERR DB index is out of range\r\n+OK\r\n"},
		{"hello syntax", []string{"HELLO 3 FOO"}, "-ERR Syntax error in HELLO option 'FOO'\r\n"},
		{"hello version", []string{"HELLO x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{"auth unset", []string{"AUTH x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{"auth default", []string{"AUTH default x"}, "+OK\r\n"},
		{"debug", []string{"DEBUG x"}, "-" + errDebugDisabled + "\r\n"},
		// lookupFor keeps the last command: names of the same length,
		// other spellings, and containers follow one another.
		{"names in turn", []string{"ECHO hi", "EXEC", "echo ho", "ECHO", "CLIENT SETNAME", "CLIENT"},
			"$2\r\nhi\r\n-ERR EXEC without MULTI\r\n$2\r\nho\r\n-ERR wrong number of arguments for 'echo' command\r\n" +
				"-ERR wrong number of arguments for 'client|setname' command\r\n-ERR wrong number of arguments for 'client' command\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := &client{s: s, id: 1, proto: 2, inMulti: -1, unblockCh: make(chan unblockRequest, 1)}
			cl.w.proto = 2
			cl.authed.Store(true)
			for _, l := range c.lines {
				var args [][]byte
				for _, f := range strings.Fields(l) {
					args = append(args, []byte(f))
				}
				s.dispatch(cl, args)
			}
			if got := string(cl.w.buf); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestReplyWriter(t *testing.T) {
	cases := []struct {
		proto int
		write func(w *replyWriter)
		want  string
	}{
		{2, func(w *replyWriter) { w.Null() }, "$-1\r\n"},
		{3, func(w *replyWriter) { w.Null() }, "_\r\n"},
		{2, func(w *replyWriter) { w.NullArray() }, "*-1\r\n"},
		{2, func(w *replyWriter) { w.Map(1); w.BulkString("a"); w.Int(1) }, "*2\r\n$1\r\na\r\n:1\r\n"},
		{3, func(w *replyWriter) { w.Map(1); w.BulkString("a"); w.Int(1) }, "%1\r\n$1\r\na\r\n:1\r\n"},
		{3, func(w *replyWriter) { w.Set(0) }, "~0\r\n"},
		{3, func(w *replyWriter) { w.Verbatim("x") }, "=5\r\ntxt:x\r\n"},
		{2, func(w *replyWriter) { w.Verbatim("x") }, "$1\r\nx\r\n"},
		{3, func(w *replyWriter) { w.Bool(true) }, "#t\r\n"},
		{2, func(w *replyWriter) { w.Error("ERR x") }, "-ERR x\r\n"},
	}
	for i, c := range cases {
		w := &replyWriter{proto: c.proto}
		c.write(w)
		if got := string(w.buf); got != c.want {
			t.Errorf("case %d: got %q, want %q", i, got, c.want)
		}
	}
}

func TestClientListLine(t *testing.T) {
	c := &client{id: 7, addr: "127.0.0.1:5000", laddr: "127.0.0.1:6379", fd: 9, created: time.Now(), lastActive: time.Now(),
		proto: 2, inMulti: -1, lastCmd: "client|list", name: "app"}
	line := c.info(time.Now())
	re := regexp.MustCompile(`^id=7 addr=127\.0\.0\.1:5000 laddr=127\.0\.0\.1:6379 fd=9 name=app age=0 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=\d+ qbuf-free=\d+ argv-mem=\d+ multi-mem=0 rbs=\d+ rbp=\d+ obl=0 oll=0 omem=0 tot-mem=\d+ events=r cmd=client\|list user=default redir=-1 resp=2$`)
	if !re.MatchString(line) {
		t.Errorf("CLIENT LIST line does not have Redis 7.0's fields:\n%s", line)
	}
}

func TestInfoSections(t *testing.T) {
	_, eng := openMemEngine(t)
	s := &Server{databases: 16, started: time.Now(), cfg: NewLiveConfig(DefaultConfig()), engine: eng}
	s.stats.init()
	s.blocks.init()
	s.buildTable(commandTable())
	cases := []struct {
		args []string
		want []string // section titles in order
	}{
		{nil, []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Errorstats", "Cluster", "Keyspace"}},
		{[]string{"clients"}, []string{"Clients"}},
		{[]string{"keyspace", "server"}, []string{"Server", "Keyspace"}},
		{[]string{"commandstats"}, []string{"Commandstats"}},
		{[]string{"nosuch"}, nil},
	}
	for _, c := range cases {
		var args [][]byte
		for _, a := range c.args {
			args = append(args, []byte(a))
		}
		text := s.infoText(nil, infoSelect(args))
		var got []string
		for _, l := range strings.Split(text, "\r\n") {
			if strings.HasPrefix(l, "# ") {
				got = append(got, l[2:])
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("INFO %v: sections %v, want %v", c.args, got, c.want)
		}
	}
	text := s.infoText(nil, infoSelect([][]byte{[]byte("server")}))
	for _, f := range []string{"redis_version:7.0.15\r\n", "redis_mode:standalone\r\n", "eddy_version:"} {
		if !strings.Contains(text, f) {
			t.Errorf("INFO server lacks %q", f)
		}
	}
	text = s.infoText(nil, infoSelect([][]byte{[]byte("persistence")}))
	// A fresh store has not stopped writes, committed or synced any.
	for _, f := range []string{"\r\neddy_write_stalls:0\r\n", "\r\neddy_write_stall_ms:0\r\n", "\r\neddy_write_stalled:0\r\n",
		"\r\neddy_commit_groups:0\r\n", "\r\neddy_commit_writes:0\r\n", "\r\neddy_syncs:0\r\n", "\r\neddy_sync_writers:0\r\n", "\r\neddy_sync_usec:0\r\n"} {
		if !strings.Contains(text, f) {
			t.Errorf("INFO persistence lacks %q: %q", f, text)
		}
	}
}

func TestParseSet(t *testing.T) {
	cases := []struct {
		line string
		err  string
	}{
		{"SET k v", ""},
		{"SET k v NX XX", errSyntax},
		{"SET k v EX 10 PX 10", errSyntax},
		{"SET k v EX 10 KEEPTTL", errSyntax},
		{"SET k v EX 0", "ERR invalid expire time in 'set' command"},
		{"SET k v EX x", errValueNotInteger},
		{"SET k v EX", errSyntax},
		{"SET k v GET NX", ""},
		{"SET k v FOO EX x", errSyntax},
	}
	for _, c := range cases {
		var args [][]byte
		for _, f := range strings.Fields(c.line) {
			args = append(args, []byte(f))
		}
		if _, err := parseSet(args, 1000); err != c.err {
			t.Errorf("%s: got %q, want %q", c.line, err, c.err)
		}
	}
}

// requestPathServer is a Server with its command table, no password and
// the default bulk limit, over e (nil: commands without a keyspace only),
// and an authenticated RESP2 client of it: the request path alone.
func requestPathServer(e *stream.Engine) (*Server, *client) {
	s := &Server{engine: e}
	s.stats.init()
	pass := ""
	s.requirePass.Store(&pass)
	s.protoMaxBulk.Store(1 << 20)
	s.buildTable(commandTable())
	c := &client{s: s, id: 1, proto: 2, inMulti: -1}
	c.w.proto = 2
	c.authed.Store(true)
	return s, c
}

// TestDispatchAllocs: looking a command up (in any case), running a
// command without a keyspace and writing its reply into the reused
// buffer allocate nothing; neither does the request guard framing a
// pipeline of ordinary requests.
func TestDispatchAllocs(t *testing.T) {
	s, cl := requestPathServer(nil)
	for _, line := range []string{"PING", "ping", "Echo hello", "XINFO HELP"} {
		var args [][]byte
		for _, f := range strings.Fields(line) {
			args = append(args, []byte(f))
		}
		if n := testing.AllocsPerRun(100, func() {
			s.dispatch(cl, args)
			cl.w.buf = cl.w.buf[:0]
		}); n > 0 {
			t.Errorf("%s: %v allocations per command", line, n)
		}
	}

	g := &guardConn{c: cl}
	req := []byte("*1\r\n$4\r\nPING\r\n*3\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n*2\r\n$4\r\nXLEN\r\n$1\r\ns\r\n")
	if n := testing.AllocsPerRun(100, func() {
		if err := g.feed(req[:10]); err != nil {
			t.Fatal(err)
		}
		if err := g.feed(req[10:]); err != nil {
			t.Fatal(err)
		}
		g.out, g.outPos = g.out[:0], 0
	}); n > 0 {
		t.Errorf("guard: %v allocations per pipeline", n)
	}
}

// TestLoadingRefuses: on a replica loading a full sync, which holds the
// keyspace, the commands Redis 7.0 allows while loading run, those that
// need the keyspace are refused unless they can go without it (INFO).
func TestLoadingRefuses(t *testing.T) {
	s := &Server{}
	s.buildTable(commandTable())
	cases := []struct {
		name    string
		refused bool
	}{
		{"info", false},       // runs without the keyspace
		{"echo", false},       // loading flag, no keyspace
		{"role", false},       // loading flag, no keyspace
		{"watch", true},       // loading flag, needs the keyspace
		{"ping", true},        // no loading flag in Redis 7.0
		{"xadd", true},        // a write
		{"xrange", true},      // a read
		{"config|get", false}, // loading flag, no keyspace
	}
	for _, c := range cases {
		spec := s.lookupFull(c.name)
		if spec == nil {
			t.Fatalf("no command %q", c.name)
		}
		if got := loadingRefuses(spec); got != c.refused {
			t.Errorf("loadingRefuses(%s) = %v, want %v", c.name, got, c.refused)
		}
	}
}
