package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/eddy-streams/eddy/replication"
	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
	"github.com/redis/go-redis/v9"
)

// startServer runs a Server on a free port with its store in a temp dir.
func startServer(t *testing.T, edit ...func(*Config)) *Server {
	t.Helper()
	return startServerOn(t, nil, edit...)
}

// startServerOn is startServer with the store's files on fs (nil: the
// disk), for tests that hold or fail the journal's syncs.
func startServerOn(t *testing.T, fs vfs.FS, edit ...func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Bind = []string{"127.0.0.1"}
	cfg.Dir = t.TempDir()
	cfg.AppendFsync = "no"
	for _, e := range edit {
		e(&cfg)
	}
	s, db := newServer(t, cfg, fs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		// A store whose journal a test made fail says so as it closes.
		if err := db.Close(); err != nil && !errors.Is(err, storage.ErrJournalFailed) {
			t.Errorf("closing the store: %v", err)
		}
	})
	return s
}

// newServer opens the store, the engine and the replication log for cfg
// as cmd/eddy wires them, and a Server over them; the caller closes the
// store once Serve has returned.
func newServer(t *testing.T, cfg Config, fs vfs.FS) (*Server, *storage.DB) {
	t.Helper()
	mode, err := storage.ParseSyncMode(cfg.AppendFsync)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(storage.Options{Dir: cfg.Dir, CacheSize: cfg.CacheSize, Sync: mode, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	log := replication.NewLog(int(cfg.ReplBacklogSize))
	opts := cfg.EngineOptions()
	opts.OnApply = log.AppendBatch
	eng, err := stream.Open(db, opts)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	s, err := New(cfg, Parts{Engine: eng, ReplLog: log}, slog.New(slog.DiscardHandler))
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return s, db
}

// rawConn is a RESP connection that sends bytes and reads exact replies.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dialRaw(t *testing.T, s *Server) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, rd: bufio.NewReader(c)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

// cmd sends an inline-free RESP command.
func (r *rawConn) cmd(args ...string) {
	r.t.Helper()
	var b strings.Builder
	b.WriteString("*" + itoa(int64(len(args))) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + itoa(int64(len(a))) + "\r\n" + a + "\r\n")
	}
	r.send(b.String())
}

// reply reads one whole RESP reply as raw text.
func (r *rawConn) reply() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	if err := readRawReply(r.rd, &b); err != nil {
		r.t.Fatalf("read reply: %v (so far %q)", err, b.String())
	}
	return b.String()
}

func readRawReply(rd *bufio.Reader, b *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	b.WriteString(line)
	body := strings.TrimSuffix(line[1:], "\r\n")
	switch line[0] {
	case '$', '=', '!':
		n := atoiOr(body, -1)
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		b.Write(buf)
	case '*', '~', '>':
		for i := 0; i < atoiOr(body, 0); i++ {
			if err := readRawReply(rd, b); err != nil {
				return err
			}
		}
	case '%', '|':
		for i := 0; i < 2*atoiOr(body, 0); i++ {
			if err := readRawReply(rd, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func atoiOr(s string, d int) int {
	n, ok := parseRedisInt([]byte(s))
	if !ok {
		return d
	}
	return int(n)
}

func (r *rawConn) expect(want string, args ...string) {
	r.t.Helper()
	r.cmd(args...)
	if got := r.reply(); got != want {
		r.t.Errorf("%q: got %q, want %q", args, got, want)
	}
}

// expectClosed checks the server closed the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := r.rd.ReadByte(); err == nil {
		r.t.Errorf("connection still open, read %q", b)
	}
}

func TestBasicCommands(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	r.expect("+PONG\r\n", "PING")
	r.expect("$2\r\nhi\r\n", "ping", "hi")
	r.expect("-ERR wrong number of arguments for 'ping' command\r\n", "PING", "a", "b")
	r.expect("-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n", "foo", "a", "b")
	r.expect("-ERR wrong number of arguments for 'xinfo' command\r\n", "XINFO")
	r.expect("-ERR unknown subcommand 'foo'. Try XINFO HELP.\r\n", "XINFO", "foo")
	r.expect("-ERR wrong number of arguments for 'xinfo|stream' command\r\n", "XINFO", "stream")
	r.expect("+OK\r\n", "SET", "k", "v")
	r.expect("$1\r\nv\r\n", "GET", "k")
	r.expect(":1\r\n", "EXISTS", "k")
	r.expect("+string\r\n", "TYPE", "k")
	r.expect(":1\r\n", "DEL", "k")
	r.expect("$-1\r\n", "GET", "k")
	r.expect(":5\r\n", "INCRBY", "n", "5")
	r.expect("-ERR value is not an integer or out of range\r\n", "INCRBY", "n", "x")
	r.expect("-ERR DB index is out of range\r\n", "SELECT", "16")
	r.expect("+OK\r\n", "SELECT", "1")
	r.expect(":0\r\n", "DBSIZE")
	r.expect("-ERR This instance has cluster support disabled\r\n", "CLUSTER", "SLOTS")
	r.expect("-ERR unknown subcommand 'foo'. Try CLUSTER HELP.\r\n", "CLUSTER", "foo")
	r.expect("+OK\r\n", "FUNCTION", "FLUSH")
	r.expect("-NOPROTO unsupported protocol version\r\n", "HELLO", "4")
	r.expect("-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n", "EXEC", "foo")
	r.expect("-ERR EXEC without MULTI\r\n", "EXEC")
}

func TestMulti(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	r.expect("+OK\r\n", "MULTI")
	r.expect("-ERR MULTI calls can not be nested\r\n", "MULTI")
	r.expect("-ERR WATCH inside MULTI is not allowed\r\n", "WATCH", "x")
	r.expect("+QUEUED\r\n", "SET", "a", "1")
	r.expect("+QUEUED\r\n", "INCR", "a")
	r.expect("+QUEUED\r\n", "XADD", "a", "*", "f", "v")
	r.expect("*3\r\n+OK\r\n:2\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "EXEC")

	r.expect("+OK\r\n", "MULTI")
	r.expect("-ERR wrong number of arguments for 'set' command\r\n", "SET", "a")
	r.expect("-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC")

	// WATCH: a change by another client aborts EXEC.
	r2 := dialRaw(t, s)
	r.expect("+OK\r\n", "WATCH", "a")
	r2.expect("+OK\r\n", "SET", "a", "2")
	r.expect("+OK\r\n", "MULTI")
	r.expect("+QUEUED\r\n", "GET", "a")
	r.expect("*-1\r\n", "EXEC")
	// WATCH of a missing key, FLUSHALL: no change.
	r.expect("+OK\r\n", "WATCH", "missing")
	r2.expect("+OK\r\n", "FLUSHALL")
	r.expect("+OK\r\n", "MULTI")
	r.expect("+QUEUED\r\n", "PING")
	r.expect("*1\r\n+PONG\r\n", "EXEC")
}

func TestProtocolErrors(t *testing.T) {
	s := startServer(t)
	cases := []struct{ in, want string }{
		{"*1\r\n$999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*1\r\nx4\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n"},
		{"*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*3000000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"PING \"a\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"PING\r\n*1\r\n$-1\r\n", "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"},
		{"*0\r\n*-1\r\nPING\r\n*1\r\n$4\r\nPINGxx\r\n", "+PONG\r\n+PONG\r\n"},
	}
	for _, c := range cases {
		r := dialRaw(t, s)
		r.send(c.in)
		var got strings.Builder
		for got.Len() < len(c.want) {
			got.WriteString(r.reply())
		}
		if got.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got.String(), c.want)
		}
		if strings.Contains(c.want, "Protocol error") {
			r.expectClosed()
		}
	}
	// The server still serves others.
	r := dialRaw(t, s)
	r.expect("+PONG\r\n", "PING")
}

func TestAuth(t *testing.T) {
	s := startServer(t, func(c *Config) { c.RequirePass = "pw" })
	r := dialRaw(t, s)
	r.expect("-NOAUTH Authentication required.\r\n", "PING")
	r.expect("-ERR unknown command 'FOO', with args beginning with: \r\n", "FOO")
	r.expect("-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n", "HELLO", "3")
	r.expect("-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "x")
	r.expect("+OK\r\n", "AUTH", "pw")
	r.expect("+PONG\r\n", "PING")
}

func TestGoRedis(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String()})
	defer rdb.Close()
	if err := rdb.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, "a").Result(); err != nil || v != "1" {
		t.Fatalf("GET: %q %v", v, err)
	}
	if n, err := rdb.Incr(ctx, "a").Result(); err != nil || n != 2 {
		t.Fatalf("INCR: %d %v", n, err)
	}
	info, err := rdb.Info(ctx, "keyspace").Result()
	if err != nil || !strings.Contains(info, "db0:keys=1,expires=0") {
		t.Fatalf("INFO: %q %v", info, err)
	}
	if _, err := rdb.ClientList(ctx).Result(); err != nil {
		t.Fatal(err)
	}
}

func TestBlockingXRead(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	w := dialRaw(t, s)
	r.expect(":1\r\n", "CLIENT", "ID") // the reader connected first
	_ = w
	// A timeout gives a null array.
	r.expect("*-1\r\n", "XREAD", "BLOCK", "50", "STREAMS", "s", "$")
	// An XADD wakes the reader; a pipelined command after it runs after.
	r.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	r.cmd("PING")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	w.expect("$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	if got := r.reply(); got != "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n" {
		t.Errorf("XREAD: %q", got)
	}
	if got := r.reply(); got != "+PONG\r\n" {
		t.Errorf("after unblock: %q", got)
	}
	// CLIENT UNBLOCK with ERROR.
	r.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	w.expect(":1\r\n", "CLIENT", "UNBLOCK", "1", "ERROR")
	if got := r.reply(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Errorf("unblock: %q", got)
	}
	// A blocked client that goes away is forgotten.
	r3 := dialRaw(t, s)
	r3.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	r3.c.Close()
	waitFor(t, func() bool { return s.blocks.count() == 0 })
	// Inside MULTI, XREAD does not block.
	r.expect("+OK\r\n", "MULTI")
	r.expect("+QUEUED\r\n", "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	r.expect("*1\r\n*-1\r\n", "EXEC")
}

// waitFor polls cond: the state it waits on lives in another goroutine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestShutdownCommand(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port, cfg.Bind, cfg.Dir = 0, []string{"127.0.0.1"}, t.TempDir()
	s, db := newServer(t, cfg, nil)
	t.Cleanup(func() { db.Close() })
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	r := dialRaw(t, s)
	r.cmd("SHUTDOWN", "NOSAVE")
	r.expectClosed()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func TestMaxClients(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxClients = 1 })
	r := dialRaw(t, s)
	r.expect("+PONG\r\n", "PING")
	r2 := dialRaw(t, s)
	line, err := r2.rd.ReadString('\n')
	if err != nil || line != "-ERR max number of clients reached\r\n" {
		t.Fatalf("got %q %v", line, err)
	}
	r2.expectClosed()
}

func TestExecBigBatch(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	const n = 10000
	var b strings.Builder
	b.WriteString("MULTI\r\n")
	for i := 0; i < n; i++ {
		b.WriteString("XADD s * f v\r\n")
	}
	b.WriteString("EXEC\r\n")
	r.send(b.String())
	if got := r.reply(); got != "+OK\r\n" {
		t.Fatalf("MULTI: %q", got)
	}
	for i := 0; i < n; i++ {
		if got := r.reply(); got != "+QUEUED\r\n" {
			t.Fatalf("queue %d: %q", i, got)
		}
	}
	if got := r.reply(); !strings.HasPrefix(got, "*10000\r\n") {
		t.Fatalf("EXEC: %.40q", got)
	}
	r.expect(":10000\r\n", "XLEN", "s")
}

func TestUnauthenticatedLimits(t *testing.T) {
	s := startServer(t, func(c *Config) { c.RequirePass = "pw" })
	r := dialRaw(t, s)
	r.send("*11\r\n")
	if got := r.reply(); got != "-ERR Protocol error: unauthenticated multibulk length\r\n" {
		t.Errorf("got %q", got)
	}
	r.expectClosed()
}
