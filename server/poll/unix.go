//go:build (linux || darwin || freebsd || netbsd || openbsd || dragonfly) && !portablepoll

package poll

import (
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
)

// On Linux and the BSDs a descriptor is the socket's own, and the calls
// that are the same on both live here; poll_epoll.go and poll_kqueue.go
// hold the rest.

var errWouldBlock error = syscall.EAGAIN

// listener is a listening socket the poller watches: a dup of the
// net.Listener's, so that closing the listener (at shutdown) cannot hand
// its number to another file while the loop still polls it. The *os.File
// is kept: its finalizer would close the descriptor.
type listener struct {
	f  *os.File
	fd int
}

func newListener(ln net.Listener) (listener, error) {
	fl, ok := ln.(interface{ File() (*os.File, error) })
	if !ok {
		return listener{}, fmt.Errorf("poll: listener %T has no descriptor", ln)
	}
	f, err := fl.File()
	if err != nil {
		return listener{}, fmt.Errorf("poll: %w", err)
	}
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		f.Close()
		return listener{}, fmt.Errorf("poll: %w", err)
	}
	return listener{f: f, fd: fd}, nil
}

// accepted finishes a connection accept took: no Nagle delay (replies are
// written whole), and its two addresses.
func accepted(fd int, sa syscall.Sockaddr) (remote, local string) {
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	remote = sockaddrString(sa)
	if lsa, err := syscall.Getsockname(fd); err == nil {
		local = sockaddrString(lsa)
	}
	return remote, local
}

// acceptError sorts an accept failure: retry, nothing pending, or out of
// descriptors.
func acceptError(err error) (retry bool, out error) {
	switch err {
	case syscall.EINTR, syscall.ECONNABORTED:
		return true, nil
	case syscall.EMFILE, syscall.ENFILE:
		return false, ErrTooManyFiles
	case syscall.EAGAIN:
		return false, ErrWouldBlock
	}
	return false, err
}

// sockaddrString formats a socket address as net.Addr does.
func sockaddrString(sa syscall.Sockaddr) string {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return (&net.TCPAddr{IP: a.Addr[:], Port: a.Port}).String()
	case *syscall.SockaddrInet6:
		return (&net.TCPAddr{IP: a.Addr[:], Port: a.Port}).String()
	}
	return ""
}

// Close closes fd, which leaves the poller's set with it.
func (p *Poller) Close(fd int) error { return syscall.Close(fd) }

// Shutdown ends fd's connection both ways, from any goroutine: the loop's
// next read of it fails, and the loop closes it.
func (p *Poller) Shutdown(fd int) { syscall.Shutdown(fd, syscall.SHUT_RDWR) }

// Detach takes fd out of the poller and returns its connection as a
// net.Conn (over a dup; fd itself is closed). A socket Go cannot take is
// returned closed, as a connection that fails at once.
func (p *Poller) Detach(fd int) net.Conn {
	p.forget(fd)
	f := os.NewFile(uintptr(fd), "")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		a, b := net.Pipe()
		a.Close()
		b.Close()
		return a
	}
	return nc
}

// waker is the pipe that wakes a poller's waits from any goroutine: the
// poller watches its read end.
type waker struct {
	r  int
	mu sync.Mutex // orders wake's write against close
	w  int        // guarded by mu; -1 once closed
}

func newWaker() (*waker, error) {
	r, w, err := nonblockingPipe()
	if err != nil {
		return nil, fmt.Errorf("poll: %w", err)
	}
	return &waker{r: r, w: w}, nil
}

func (k *waker) wake() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.w >= 0 {
		syscall.Write(k.w, []byte{1})
	}
}

// drain empties the pipe once a wait reported it.
func (k *waker) drain() {
	var buf [64]byte
	for {
		if n, _ := syscall.Read(k.r, buf[:]); n < len(buf) {
			return
		}
	}
}

// shut closes the poller's own descriptors: the listeners' dups, the
// wake pipe and pollFD (the epoll instance or the kqueue).
func shut(lns []listener, k *waker, pollFD int) {
	for _, ln := range lns {
		ln.f.Close()
	}
	if k != nil {
		k.mu.Lock()
		if k.w >= 0 {
			syscall.Close(k.r)
			syscall.Close(k.w)
			k.w = -1
		}
		k.mu.Unlock()
	}
	if pollFD >= 0 {
		syscall.Close(pollFD)
	}
}
