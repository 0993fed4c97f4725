package server

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/replication"
)

// These tests are here for what the event loop must do by hand: sockets closed from other
// goroutines, idle timeouts, writes the socket does not take at once,
// clients parked on a blocked command, clients that leave the loop with
// requests in flight.

func TestClientKill(t *testing.T) {
	s := startServer(t)
	a, b, blocked := dialRaw(t, s), dialRaw(t, s), dialRaw(t, s)
	a.cmd("CLIENT", "ID")
	aID := strings.TrimSpace(a.reply()[1:])
	blocked.cmd("CLIENT", "ID")
	blockedID := strings.TrimSpace(blocked.reply()[1:])
	b.expect(":1\r\n", "CLIENT", "KILL", "ID", aID)
	a.expectClosed()
	b.expect("+PONG\r\n", "PING")
	// A blocked client: parked in the loop, or served by a goroutine of
	// its own.
	blocked.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	b.expect(":1\r\n", "CLIENT", "KILL", "ID", blockedID)
	blocked.expectClosed()
	waitFor(t, func() bool { return s.blocks.count() == 0 })
	b.expect("+PONG\r\n", "PING")
}

func TestIdleTimeout(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Timeout = 1 })
	idle, blocked := dialRaw(t, s), dialRaw(t, s)
	idle.expect("+PONG\r\n", "PING")
	blocked.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	start := time.Now()
	idle.expectClosed()
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("closed after %v, timeout is 1 s", d)
	}
	// A blocked client never times out.
	if s.blocks.count() != 1 {
		t.Fatal("the blocked client was dropped")
	}
	w := dialRaw(t, s)
	wake(t, w, blocked, "1-1")
}

// A client that does not read its replies must not hold up the others,
// and gets every byte once it reads.
func TestSlowReader(t *testing.T) {
	s := startServer(t)
	w := dialRaw(t, s)
	value := strings.Repeat("v", 1000)
	const entries, reads = 1000, 40
	var b strings.Builder
	for i := 1; i <= entries; i++ {
		fmt.Fprintf(&b, "*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$%d\r\n%d-1\r\n$1\r\nf\r\n$%d\r\n%s\r\n", len(strconv.Itoa(i))+2, i, len(value), value)
	}
	w.send(b.String())
	for range entries {
		w.reply()
	}
	// About 40 MB of replies: far more than the socket buffers hold.
	slow := dialRaw(t, s)
	b.Reset()
	for range reads {
		b.WriteString("*4\r\n$6\r\nXRANGE\r\n$1\r\ns\r\n$1\r\n-\r\n$1\r\n+\r\n")
	}
	slow.send(b.String())
	waitFor(t, func() bool { return strings.Contains(clientListLine(t, w, "cmd=xrange"), "cmd=xrange") })
	w.expect("+PONG\r\n", "PING")
	w.expect(":1000\r\n", "XLEN", "s")
	first := slow.reply()
	if !strings.HasPrefix(first, "*1000\r\n") {
		t.Fatalf("XRANGE reply starts %q", first[:min(len(first), 20)])
	}
	for i := 1; i < reads; i++ {
		if got := slow.reply(); got != first {
			t.Fatalf("XRANGE reply %d differs (%d bytes, want %d)", i, len(got), len(first))
		}
	}
	slow.expect("+PONG\r\n", "PING")
}

// clientListLine returns the CLIENT LIST line that contains substr, or "".
func clientListLine(t *testing.T, r *rawConn, substr string) string {
	t.Helper()
	r.cmd("CLIENT", "LIST")
	for _, line := range strings.Split(r.reply(), "\n") {
		if strings.Contains(line, substr) {
			return line
		}
	}
	return ""
}

// WAIT blocks as XREAD BLOCK does: a blocked client, as Redis counts it,
// that holds up no one else, ends at its timeout or on CLIENT UNBLOCK
// with the count of replicas, and runs the commands behind it after.
func TestWaitHoldsUpNoOne(t *testing.T) {
	s := startServer(t)
	a, b := dialRaw(t, s), dialRaw(t, s)
	a.expect(":0\r\n", "WAIT", "0", "0")
	start := time.Now()
	a.expect(":0\r\n", "WAIT", "1", "100")
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("WAIT 1 100 answered after %v", waited)
	}
	a.cmd("CLIENT", "ID")
	aID := strings.TrimSpace(a.reply()[1:])
	// No replica will ever ack: WAIT 1 0 waits until it is unblocked.
	a.cmd("WAIT", "1", "0")
	a.cmd("PING")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	if line := clientListLine(t, b, "cmd=wait"); !strings.Contains(line, "flags=b") {
		t.Errorf("CLIENT LIST of a client in WAIT: %q", line)
	}
	b.expect("+PONG\r\n", "PING")
	b.expect("$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	b.expect(":1\r\n", "CLIENT", "UNBLOCK", aID)
	if got := a.reply(); got != ":0\r\n" {
		t.Errorf("WAIT after CLIENT UNBLOCK: %q", got)
	}
	if got := a.reply(); got != "+PONG\r\n" {
		t.Errorf("PING behind WAIT: %q", got)
	}
}

// A client that blocks keeps the rest of its pipeline and the start of a
// request not yet complete (parked in the event loop, or handed to a
// goroutine of its own), and runs them once served.
func TestBlockWithRequestsInFlight(t *testing.T) {
	s := startServer(t)
	r, w := dialRaw(t, s), dialRaw(t, s)
	r.expect("+PONG\r\n", "PING")
	r.send("*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n$\r\n" +
		"*2\r\n$4\r\nECHO\r\n$1\r\na\r\n*2\r\n$4\r\nECHO\r\n$2\r\nb")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	wake(t, w, r, "1-1")
	r.send("b\r\n")
	if got := r.reply(); got != "$1\r\na\r\n" {
		t.Errorf("first ECHO: %q", got)
	}
	if got := r.reply(); got != "$2\r\nbb\r\n" {
		t.Errorf("second ECHO: %q", got)
	}
	r.expect("+PONG\r\n", "PING")
}

// A request split over many reads.
func TestRequestInPieces(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	req := "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n"
	for i := range len(req) {
		r.send(req[i : i+1])
	}
	if got := r.reply(); got != "$5\r\nhello\r\n" {
		t.Errorf("got %q", got)
	}
}

// More writes arrive in a turn than one group takes (groupMax): the rest
// run in the next turns, none lost, each client's in order.
func TestLoopCarriesWritesOver(t *testing.T) {
	s := startServer(t)
	if s.loop == nil {
		t.Skip("no event loop here")
	}
	const clients, each = 20, 200
	conns := make([]*rawConn, clients)
	for i := range conns {
		conns[i] = dialRaw(t, s)
	}
	for round := 0; s.loop.carries.Load() == 0; round++ {
		if round == 20 {
			t.Fatal("no turn held more than one group's writes")
		}
		done := make(chan struct{})
		for i, r := range conns {
			go func() {
				defer func() { done <- struct{}{} }()
				var b strings.Builder
				for j := 1; j <= each; j++ {
					b.WriteString(resp(fmt.Sprintf("XADD r%ds%d %d-1 f v", round, i, j)))
				}
				r.c.Write([]byte(b.String()))
			}()
		}
		for range conns {
			<-done
		}
		for i, r := range conns {
			for j := 1; j <= each; j++ {
				want := fmt.Sprintf("%d-1", j)
				if got := r.reply(); got != "$"+strconv.Itoa(len(want))+"\r\n"+want+"\r\n" {
					t.Fatalf("round %d client %d XADD %d: %q", round, i, j, got)
				}
			}
			r.expect(":"+strconv.Itoa(each)+"\r\n", "XLEN", "r"+strconv.Itoa(round)+"s"+strconv.Itoa(i))
		}
	}
}

// A client that sends its writes and closes its side at once gets them
// all run, also when some wait for the next turn's group: Redis runs what
// it has read before it notices the end of the stream.
func TestLoopRunsWritesBeforeEOF(t *testing.T) {
	s := startServer(t)
	if s.loop == nil {
		t.Skip("no event loop here")
	}
	const clients, each = 20, 200
	ctl := dialRaw(t, s)
	for round := 0; s.loop.carries.Load() == 0; round++ {
		if round == 20 {
			t.Fatal("no turn held more than one group's writes")
		}
		for i := range clients {
			r := dialRaw(t, s)
			var b strings.Builder
			for j := 1; j <= each; j++ {
				b.WriteString(resp(fmt.Sprintf("XADD r%ds%d %d-1 f v", round, i, j)))
			}
			go func() {
				r.c.Write([]byte(b.String()))
				r.c.(*net.TCPConn).CloseWrite()
			}()
		}
		for i := range clients {
			key := fmt.Sprintf("r%ds%d", round, i)
			waitFor(t, func() bool {
				ctl.cmd("XLEN", key)
				return ctl.reply() == ":"+strconv.Itoa(each)+"\r\n"
			})
		}
	}
}

// CLIENT LIST shows the descriptor a client has: the loop's while it is
// blocked there, one of its own once it left the event loop (a dup of
// the loop's, so never the same number).
func TestClientListFDAfterLeavingLoop(t *testing.T) {
	s := startServer(t)
	if s.loop == nil {
		t.Skip("no event loop here")
	}
	r, w := dialRaw(t, s), dialRaw(t, s)
	r.expect("+OK\r\n", "CLIENT", "SETNAME", "reader")
	fd := func() string {
		line := clientListLine(t, w, "name=reader")
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "fd=") {
				return f
			}
		}
		t.Fatalf("no fd in %q", line)
		return ""
	}
	before := fd()
	// A blocked reader stays in the loop, with its descriptor.
	r.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	if after := fd(); after != before {
		t.Errorf("CLIENT LIST of a reader blocked in the loop: %s, before %s", after, before)
	}
	w.expect("$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	want := "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
	if got := r.reply(); got != want {
		t.Errorf("woken reader: %q, want %q", got, want)
	}
	// PSYNC takes it out of the loop: the connection is a replica link.
	r.expect("+OK\r\n", "REPLCONF", "eddy-proto", strconv.Itoa(replication.ProtoVersion))
	r.cmd("PSYNC", "?", "-1")
	waitFor(t, func() bool { after := fd(); return after != before && after != "fd=-1" })
}

// Blocked commands time out each at its own deadline. One answered before
// its deadline leaves no timer behind to answer the client's next blocked
// command.
func TestBlockedTimeouts(t *testing.T) {
	s := startServer(t)
	early, late, w := dialRaw(t, s), dialRaw(t, s), dialRaw(t, s)
	early.cmd("XREAD", "BLOCK", "100", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	wake(t, w, early, "1-1")
	early.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	start := time.Now()
	late.expect("*-1\r\n", "XREAD", "BLOCK", "300", "STREAMS", "s", "$")
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("BLOCK 300 answered after %v", waited)
	}
	// Past the first command's deadline, the client still waits.
	if n := s.blocks.count(); n != 1 {
		t.Fatalf("%d clients blocked, want 1", n)
	}
	wake(t, w, early, "2-1")
}

// A protocol error read behind a blocked command is answered after it, as
// it would be after any command, and ends the connection.
func TestProtocolErrorBehindBlocked(t *testing.T) {
	s := startServer(t)
	r, w := dialRaw(t, s), dialRaw(t, s)
	r.send("*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n$\r\n" +
		"*1\r\n$4\r\nPING\r\n*x\r\n")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	wake(t, w, r, "1-1")
	if got := r.reply(); got != "+PONG\r\n" {
		t.Errorf("PING: %q", got)
	}
	if got := r.reply(); got != "-ERR Protocol error: invalid multibulk length\r\n" {
		t.Errorf("protocol error: %q", got)
	}
	r.expectClosed()
}

// wake appends entry id to stream s through w and checks that the reader
// blocked on s gets it.
func wake(t *testing.T, w, reader *rawConn, id string) {
	t.Helper()
	w.expect("$3\r\n"+id+"\r\n", "XADD", "s", id, "f", "v")
	if got := reader.reply(); !strings.Contains(got, id) {
		t.Fatalf("blocked reader, woken by %s: %q", id, got)
	}
}

// Readers blocked alike and woken by one commit get what each would read
// on its own: the event loop serves identical reads with one, and must
// keep apart what differs (protocol, COUNT, IDs).
func TestReadersWokenTogether(t *testing.T) {
	s := startServer(t)
	w := dialRaw(t, s)
	w.expect("$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	type reader struct {
		conn  *rawConn
		resp3 bool
		args  []string // the XREAD, after BLOCK 0
	}
	readers := []reader{
		{args: []string{"STREAMS", "s", "$"}},
		{args: []string{"STREAMS", "s", "$"}},
		{args: []string{"STREAMS", "s", "1-1"}},
		{resp3: true, args: []string{"STREAMS", "s", "$"}},
		{args: []string{"COUNT", "1", "STREAMS", "s", "$"}},
		{args: []string{"STREAMS", "other", "s", "$", "$"}},
		{args: []string{"STREAMS", "s", "2-1"}},
		{args: []string{"STREAMS", "s", "0-1"}},
	}
	for i := range readers {
		r := &readers[i]
		r.conn = dialRaw(t, s)
		if r.resp3 {
			r.conn.cmd("HELLO", "3")
			r.conn.reply()
		}
	}
	// The last reader's ID has an entry after it: it is answered at once.
	last := readers[len(readers)-1]
	last.conn.cmd(append([]string{"XREAD", "BLOCK", "0"}, last.args...)...)
	if got := last.conn.reply(); !strings.Contains(got, "1-1") {
		t.Errorf("reader with an entry after its ID: %q", got)
	}
	readers = readers[:len(readers)-1]
	for _, r := range readers {
		r.conn.cmd(append([]string{"XREAD", "BLOCK", "0"}, r.args...)...)
	}
	waitFor(t, func() bool { return s.blocks.count() == len(readers) })
	w.expect("+OK\r\n", "MULTI")
	w.expect("+QUEUED\r\n", "XADD", "s", "2-1", "f", "v")
	w.expect("+QUEUED\r\n", "XADD", "s", "3-1", "g", "w")
	w.expect("*2\r\n$3\r\n2-1\r\n$3\r\n3-1\r\n", "EXEC")
	// Each reply is what the same read returns now, without blocking,
	// from the ID the reader waited after.
	check := dialRaw(t, s)
	check3 := dialRaw(t, s)
	check3.cmd("HELLO", "3")
	check3.reply()
	for i, r := range readers {
		got := r.conn.reply()
		args := slices.Clone(r.args)
		for j, a := range args {
			if a == "$" {
				args[j] = "1-1"
			}
		}
		c := check
		if r.resp3 {
			c = check3
		}
		c.cmd(append([]string{"XREAD"}, args...)...)
		if want := c.reply(); got != want {
			t.Errorf("reader %d (XREAD BLOCK 0 %s): %q, want %q", i, strings.Join(r.args, " "), got, want)
		}
	}
}

// REPLICAOF host port unblocks every blocked client with Redis 7.0's
// -UNBLOCKED error (disconnectAllBlockedClients) and disconnects it; what
// it sent behind the blocked command is not run. A REPLICAOF of the
// primary it follows already leaves the others alone, as in Redis.
func TestReplicaOfDisconnectsBlocked(t *testing.T) {
	s := startServer(t)
	// A port nothing listens on: the replica's link never comes up.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	x, w, c := dialRaw(t, s), dialRaw(t, s), dialRaw(t, s)
	x.send("*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n$\r\n*1\r\n$4\r\nPING\r\n")
	w.cmd("WAIT", "1", "0")
	waitFor(t, func() bool { return s.blocks.count() == 2 })
	c.expect("+OK\r\n", "REPLICAOF", "127.0.0.1", port)
	const want = "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"
	for name, r := range map[string]*rawConn{"XREAD": x, "WAIT": w} {
		if got := r.reply(); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
		r.expectClosed()
	}
	// Blocked on the replica, then the same primary again: still blocked.
	y := dialRaw(t, s)
	y.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	c.expect("+OK Already connected to specified master\r\n", "REPLICAOF", "127.0.0.1", port)
	c.expect("+OK\r\n", "REPLICAOF", "NO", "ONE")
	if n := s.blocks.count(); n != 1 {
		t.Errorf("blocked clients after REPLICAOF of the same primary and NO ONE: %d", n)
	}
}
