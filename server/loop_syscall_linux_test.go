//go:build linux

package server

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// The raw calls behave as syscall.Read, syscall.Write and
// syscall.EpollWait do on a non-blocking socket: data both ways, EAGAIN
// when nothing is there, the end of stream, an error once the peer is
// gone, and a poll that reports what is ready without waiting.
func TestLoopSyscalls(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fds[0], fds[1]
	defer syscall.Close(a)
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(ep)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(a)}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, a, &ev); err != nil {
		t.Fatal(err)
	}
	evs := make([]syscall.EpollEvent, 4)
	buf := make([]byte, 16)

	if n, err := pollNB(ep, evs); n != 0 || err != nil {
		t.Fatalf("poll of an idle socket: %d, %v", n, err)
	}
	if n, err := readNB(a, buf); n != -1 || !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("read of an idle socket: %d, %v; want EAGAIN", n, err)
	}
	if n, err := epollWait(ep, evs, 1); n != 0 || err != nil {
		t.Fatalf("1 ms wait on an idle socket: %d, %v", n, err)
	}
	if n, err := readNB(a, nil); n != 0 || err != nil {
		t.Fatalf("read into nothing: %d, %v", n, err)
	}

	if n, err := writeNB(b, []byte("PING\r\n")); n != 6 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	if n, err := pollNB(ep, evs); n != 1 || err != nil || int(evs[0].Fd) != a || evs[0].Events&syscall.EPOLLIN == 0 {
		t.Fatalf("poll after a write: %d, %v, %+v", n, err, evs[0])
	}
	if n, err := readNB(a, buf); n != 6 || err != nil || string(buf[:n]) != "PING\r\n" {
		t.Fatalf("read: %d %q, %v", n, buf[:max(n, 0)], err)
	}

	// A blocking wait returns when data comes.
	go func() {
		time.Sleep(20 * time.Millisecond)
		writeNB(b, []byte("x"))
	}()
	if n, err := epollWait(ep, evs, 10_000); n != 1 || err != nil {
		t.Fatalf("wait for a late write: %d, %v", n, err)
	}
	if n, err := readNB(a, buf); n != 1 || err != nil {
		t.Fatalf("read of the late write: %d, %v", n, err)
	}

	// A full socket: EAGAIN, not a short count forever.
	chunk := make([]byte, 64<<10)
	var full error
	for i := 0; i < 1000 && full == nil; i++ {
		_, full = writeNB(a, chunk)
	}
	if !errors.Is(full, syscall.EAGAIN) {
		t.Fatalf("writes to a socket nobody reads ended with %v; want EAGAIN", full)
	}

	// The peer goes with what a wrote unread: a reset, as a client that
	// hangs up on its replies gives the loop.
	syscall.Close(b)
	if n, err := readNB(a, chunk); n != -1 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after the peer closed: %d, %v; want ECONNRESET", n, err)
	}
	if _, err := writeNB(a, []byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write after the peer closed: %v; want EPIPE", err)
	}

	// A peer that hangs up having read everything: the end of stream.
	fds, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	syscall.Close(fds[1])
	if n, err := readNB(fds[0], buf); n != 0 || err != nil {
		t.Fatalf("read at the end of stream: %d, %v", n, err)
	}
}
