package poll

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// These tests hold what the server's loop relies on, for whichever
// backend this build has: make test runs them as built for Linux (epoll)
// and with -tags portablepoll (the backend of Windows).

// pair is a poller with one accepted connection: fd on the poller's side,
// peer the client's.
type pair struct {
	t    *testing.T
	p    *Poller
	lfd  int
	fd   int
	peer net.Conn
}

func newPair(t *testing.T, in Interest) *pair {
	t.Helper()
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); p.Shut() })
	lfd, err := p.AddListener(ln)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := p.Accept(lfd); err != ErrWouldBlock {
		t.Fatalf("Accept with nothing pending: %v, want ErrWouldBlock", err)
	}
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	pr := &pair{t: t, p: p, lfd: lfd, peer: peer}
	pr.waitFor(lfd)
	fd, remote, local, err := p.Accept(lfd)
	if err != nil {
		t.Fatal(err)
	}
	if remote != peer.LocalAddr().String() || local != peer.RemoteAddr().String() {
		t.Errorf("Accept addresses %s %s, want %s %s", remote, local, peer.LocalAddr(), peer.RemoteAddr())
	}
	if err := p.Add(fd, in); err != nil {
		t.Fatal(err)
	}
	pr.fd = fd
	t.Cleanup(func() { p.Close(fd) })
	return pr
}

// waitFor waits until an event for fd comes, and returns it.
func (pr *pair) waitFor(fd int) Event {
	pr.t.Helper()
	evs := make([]Event, 8)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, _, err := pr.p.Wait(evs, time.Second)
		if err != nil {
			pr.t.Fatal(err)
		}
		for _, ev := range evs[:n] {
			if ev.FD == fd {
				return ev
			}
		}
	}
	pr.t.Fatalf("no event for %d", fd)
	return Event{}
}

// quiet checks that no event for fd comes within d.
func (pr *pair) quiet(fd int, d time.Duration) {
	pr.t.Helper()
	evs := make([]Event, 8)
	end := time.Now().Add(d)
	for left := d; left > 0; left = time.Until(end) {
		n, _, err := pr.p.Wait(evs, left)
		if err != nil {
			pr.t.Fatal(err)
		}
		for _, ev := range evs[:n] {
			if ev.FD == fd {
				pr.t.Fatalf("event %+v for %d, want none", ev, fd)
			}
		}
	}
}

// readAll reads fd until it has want bytes.
func (pr *pair) readAll(want int) []byte {
	pr.t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < want {
		pr.waitFor(pr.fd)
		n, err := pr.p.Read(pr.fd, buf)
		if err == ErrWouldBlock {
			continue
		}
		if err != nil || n <= 0 {
			pr.t.Fatalf("Read: %d, %v", n, err)
		}
		got = append(got, buf[:n]...)
	}
	return got
}

func TestReadWrite(t *testing.T) {
	pr := newPair(t, Readable)
	if _, err := pr.peer.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if got := pr.readAll(6); string(got) != "PING\r\n" {
		t.Fatalf("read %q", got)
	}
	if n, err := pr.p.Read(pr.fd, make([]byte, 16)); err != ErrWouldBlock {
		t.Fatalf("Read of nothing: %d, %v, want ErrWouldBlock", n, err)
	}
	if n, err := pr.p.Write(pr.fd, []byte("+PONG\r\n")); n != 7 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	got := make([]byte, 7)
	if _, err := io.ReadFull(pr.peer, got); err != nil || string(got) != "+PONG\r\n" {
		t.Fatalf("peer read %q, %v", got, err)
	}
}

// Data is reported again until it is read (level-triggered).
func TestLevelTriggered(t *testing.T) {
	pr := newPair(t, Readable)
	pr.peer.Write([]byte("abc"))
	pr.waitFor(pr.fd)
	pr.waitFor(pr.fd)
	if got := pr.readAll(3); string(got) != "abc" {
		t.Fatalf("read %q", got)
	}
	pr.quiet(pr.fd, 50*time.Millisecond)
}

// Watched for HangUp, data waits unread and only the end is reported:
// a client whose command blocks is dropped when it goes, not when it
// pipelines more.
func TestHangUpOnly(t *testing.T) {
	pr := newPair(t, HangUp)
	pr.peer.Write([]byte("XADD s * f v\r\n"))
	pr.quiet(pr.fd, 100*time.Millisecond)
	pr.peer.Close()
	pr.waitFor(pr.fd)
}

// Watched for nothing, data is not reported; watched again, it is.
func TestNoneMutes(t *testing.T) {
	pr := newPair(t, None)
	pr.peer.Write([]byte("abc"))
	pr.quiet(pr.fd, 100*time.Millisecond)
	pr.p.Modify(pr.fd, Readable)
	if got := pr.readAll(3); string(got) != "abc" {
		t.Fatalf("read %q", got)
	}
}

// A write the socket cannot take says ErrWouldBlock; watched for
// Writable, the socket is reported once the peer reads.
func TestWritable(t *testing.T) {
	pr := newPair(t, Readable)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	written := 0
	for {
		n, err := pr.p.Write(pr.fd, chunk)
		if err == ErrWouldBlock {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		written += n
		if written > 256<<20 {
			t.Fatal("the socket took 256 MB without blocking")
		}
	}
	pr.p.Modify(pr.fd, Writable)
	go io.Copy(io.Discard, pr.peer)
	if ev := pr.waitFor(pr.fd); ev.HangUp {
		t.Fatalf("event %+v", ev)
	}
	if _, err := pr.p.Write(pr.fd, []byte("y")); err != nil {
		t.Fatalf("Write once writable: %v", err)
	}
}

// The peer's close: the read returns the end, 0 bytes.
func TestPeerClose(t *testing.T) {
	pr := newPair(t, Readable)
	pr.peer.Close()
	pr.readEnd()
}

// Shutdown, from another goroutine, makes the loop's next read fail.
func TestShutdown(t *testing.T) {
	pr := newPair(t, Readable)
	go pr.p.Shutdown(pr.fd)
	pr.readEnd()
}

// readEnd reads fd until the read reports its end, and fails on data.
func (pr *pair) readEnd() {
	pr.t.Helper()
	for {
		pr.waitFor(pr.fd)
		n, err := pr.p.Read(pr.fd, make([]byte, 16))
		if err == ErrWouldBlock {
			continue
		}
		if n > 0 {
			pr.t.Fatalf("read %d bytes, want the end", n)
		}
		return
	}
}

// Wake, from another goroutine, ends a Wait that would wait for ever.
func TestWake(t *testing.T) {
	pr := newPair(t, Readable)
	go pr.p.Wake()
	n, woken, err := pr.p.Wait(make([]Event, 8), -1)
	if err != nil || n != 0 || !woken {
		t.Fatalf("Wait: %d events, woken %v, %v", n, woken, err)
	}
	// Once reported, a wake is not reported again.
	if _, woken, _ := pr.p.Wait(make([]Event, 8), 0); woken {
		t.Fatal("woken twice")
	}
}

// A detached connection keeps its stream: what was sent before is read
// from it, and it writes.
func TestDetach(t *testing.T) {
	pr := newPair(t, Readable)
	pr.peer.Write([]byte("PSYNC ? -1\r\n"))
	pr.waitFor(pr.fd)
	nc := pr.p.Detach(pr.fd)
	defer nc.Close()
	pr.peer.Write([]byte("REPLCONF ACK 0\r\n"))
	want := "PSYNC ? -1\r\nREPLCONF ACK 0\r\n"
	got := make([]byte, len(want))
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != want {
		t.Fatalf("detached read %q, %v", got, err)
	}
	if _, err := nc.Write([]byte("+FULLRESYNC\r\n")); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, 13)
	if _, err := io.ReadFull(pr.peer, back); err != nil || string(back) != "+FULLRESYNC\r\n" {
		t.Fatalf("peer read %q, %v", back, err)
	}
	pr.quiet(pr.fd, 50*time.Millisecond)
}

// Close closes the socket: the peer sees the end.
func TestClose(t *testing.T) {
	pr := newPair(t, Readable)
	if err := pr.p.Close(pr.fd); err != nil {
		t.Fatal(err)
	}
	pr.peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := pr.peer.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("peer read after Close: %v, want EOF", err)
	}
}
