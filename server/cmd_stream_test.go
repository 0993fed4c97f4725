package server

import (
	"bufio"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
)

// argv splits a test command line on spaces; a double-quoted word is Go
// syntax, so cases can hold spaces, empty strings and odd bytes.
func argv(t *testing.T, line string) [][]byte {
	t.Helper()
	var out [][]byte
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				t.Fatalf("bad quoting in %q: %v", line, err)
			}
			s, _ := strconv.Unquote(q)
			out = append(out, []byte(s))
			line = line[len(q):]
			continue
		}
		end := strings.IndexByte(line, ' ')
		if end < 0 {
			end = len(line)
		}
		out = append(out, []byte(line[:end]))
		line = line[end:]
	}
	return out
}

func TestStreamCommandsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range streamCommands() {
		if seen[c.name] {
			t.Errorf("%s registered twice", c.name)
		}
		seen[c.name] = true
		if c.name != strings.ToLower(c.name) {
			t.Errorf("%s: name not lower case", c.name)
		}
		// buildTable applies the documentation generated from Redis.
		if m, ok := redisCommandMeta[c.name]; ok {
			c.applyMeta(m)
		}
		if c.group != "stream" || c.since == "" || c.summary == "" {
			t.Errorf("%s: docs missing", c.name)
		}
		if len(c.subcommands) == 0 && c.handler == nil {
			t.Errorf("%s: no handler", c.name)
		}
		if c.flags&flagWrite != 0 && c.flags&flagReadOnly != 0 {
			t.Errorf("%s: both write and readonly", c.name)
		}
		for _, s := range c.subcommands {
			if m, ok := redisCommandMeta[c.name+"|"+s.name]; ok {
				s.applyMeta(m)
			}
			if s.handler == nil || s.group != "stream" {
				t.Errorf("%s|%s: no handler or docs", c.name, s.name)
			}
		}
	}
	for _, name := range []string{"xadd", "xrange", "xrevrange", "xread", "xlen", "xdel", "xtrim", "xsetid", "xinfo",
		"xgroup", "xreadgroup", "xack", "xpending", "xclaim", "xautoclaim"} {
		if !seen[name] {
			t.Errorf("%s missing", name)
		}
	}
}

// checkRedis re-derives an expected reply from a real Redis 7.0 when
// EDDY_TEST_REDIS names one that may be flushed (host:port): it runs
// FLUSHALL, the setup lines, then line, and fails unless line's reply is
// the error wantErr (or, for "", no error). Without the variable it does
// nothing, so the tables stay plain unit tests.
func checkRedis(t *testing.T, setup []string, line, wantErr string) {
	t.Helper()
	rc := dialTestRedis(t, 2)
	if rc == nil {
		return
	}
	for _, l := range setup {
		if rep := rc.do(l); strings.HasPrefix(rep, "-") {
			t.Fatalf("setup %q: %s", l, rep)
		}
	}
	rep := rc.do(line)
	switch {
	case wantErr == "" && strings.HasPrefix(rep, "-"):
		t.Errorf("redis: %s: %q, want no error", line, rep)
	case wantErr != "" && rep != "-"+wantErr+"\r\n":
		t.Errorf("redis: %s: %q, want -%s", line, rep, wantErr)
	}
}

// testRedis is a connection to the Redis named by EDDY_TEST_REDIS.
type testRedis struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

// dialTestRedis connects to EDDY_TEST_REDIS, flushes it and switches to
// RESP proto; nil when the variable is unset.
func dialTestRedis(t *testing.T, proto int) *testRedis {
	t.Helper()
	addr := os.Getenv("EDDY_TEST_REDIS")
	if addr == "" {
		return nil
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("EDDY_TEST_REDIS: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	rc := &testRedis{t: t, conn: conn, r: bufio.NewReader(conn)}
	rc.do("hello " + strconv.Itoa(proto))
	rc.do("flushall")
	return rc
}

// do sends one command line and returns the raw reply.
func (rc *testRedis) do(line string) string {
	rc.t.Helper()
	var w replyWriter
	args := argv(rc.t, line)
	w.Array(len(args))
	for _, a := range args {
		w.Bulk(a)
	}
	if _, err := rc.conn.Write(w.buf); err != nil {
		rc.t.Fatal(err)
	}
	var out strings.Builder
	rc.read(&out)
	return out.String()
}

// read copies one RESP2/RESP3 reply, nested elements included, to out.
func (rc *testRedis) read(out *strings.Builder) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		rc.t.Fatal(err)
	}
	out.WriteString(line)
	n, _ := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
	switch line[0] {
	case '$', '=', '!':
		if n >= 0 {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(rc.r, buf); err != nil {
				rc.t.Fatal(err)
			}
			out.Write(buf)
		}
	case '%', '|':
		n *= 2
		fallthrough
	case '*', '~', '>':
		for range max(n, 0) {
			rc.read(out)
		}
	}
}

// streamHarness runs stream handlers against an in-memory engine the way
// the dispatcher does (writes in Update, reads in View), and, when
// EDDY_TEST_REDIS is set, the same lines against Redis to compare.
type streamHarness struct {
	t     *testing.T
	e     *stream.Engine
	specs map[string]*commandSpec // "xadd", "xinfo|stream", ...
	proto int
	redis *testRedis
}

// openMemEngine opens an in-memory store and a stream engine over it,
// closed when the test or benchmark ends.
func openMemEngine(tb testing.TB) (*storage.DB, *stream.Engine) {
	tb.Helper()
	db, err := storage.Open(storage.InMemory())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	e, err := stream.Open(db, stream.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return db, e
}

func newStreamHarness(t *testing.T, proto int) *streamHarness {
	t.Helper()
	_, e := openMemEngine(t)
	h := &streamHarness{t: t, e: e, specs: map[string]*commandSpec{}, proto: proto}
	for _, c := range streamCommands() {
		h.specs[c.name] = c
		for _, s := range c.subcommands {
			h.specs[c.name+"|"+s.name] = s
		}
	}
	h.redis = dialTestRedis(t, proto)
	return h
}

// run runs one line on the engine and returns the context it ran with.
func (h *streamHarness) run(line string, inMulti bool) *cmdContext {
	h.t.Helper()
	args := argv(h.t, line)
	name := lower(args[0])
	spec := h.specs[name]
	if spec != nil && len(spec.subcommands) > 0 {
		spec = h.specs[name+"|"+lower(args[1])]
	}
	if spec == nil || !spec.arityOK(len(args)) {
		h.t.Fatalf("%s: not a stream command line with a valid arity", line)
	}
	ctx := &cmdContext{args: args, w: &replyWriter{proto: h.proto}, inMulti: inMulti}
	h.exec(ctx, spec.flags, spec.handler)
	return ctx
}

// exec calls handler inside the transaction its flags ask for.
func (h *streamHarness) exec(ctx *cmdContext, flags cmdFlags, handler func(*cmdContext)) {
	h.t.Helper()
	call := func(tx *stream.Tx) error {
		ctx.tx = tx
		handler(ctx)
		return nil
	}
	var err error
	switch {
	case flags&flagNoKeyspace != 0:
		handler(ctx)
	case flags&flagWrite != 0:
		err = h.e.Update(call)
	default:
		err = h.e.View(call)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// expect runs line and compares the raw reply with want, and with Redis's
// reply when EDDY_TEST_REDIS is set.
func (h *streamHarness) expect(line, want string) *cmdContext {
	h.t.Helper()
	ctx := h.run(line, false)
	if got := string(ctx.w.buf); got != want {
		h.t.Errorf("%s:\n got %q\nwant %q", line, got, want)
	}
	if h.redis != nil {
		if got := h.redis.do(line); got != want {
			h.t.Errorf("redis: %s:\n got %q\nwant %q", line, got, want)
		}
	}
	return ctx
}
