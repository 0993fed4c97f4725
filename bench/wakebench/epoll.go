//go:build linux

package main

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"time"
)

// readers are the blocked clients' connections, raw non-blocking sockets
// watched by one epoll set. A goroutine per connection would make the
// client's own wake-ups (1,000 goroutines scheduled on two cores shared
// with the server) a large part of the figure; one thread reading ready
// sockets costs a read per reply and stamps each reply when it is
// complete.
type readers struct {
	epfd int
	fds  []int
	bufs [][]byte
	done []time.Duration
	evs  []syscall.EpollEvent
}

func dialReaders(addr string, n int) (*readers, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return nil, err
	}
	sa := &syscall.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	r := &readers{epfd: epfd, bufs: make([][]byte, n), done: make([]time.Duration, n), evs: make([]syscall.EpollEvent, 256)}
	for i := range n {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			r.close()
			return nil, err
		}
		r.fds = append(r.fds, fd)
		if err := syscall.Connect(fd, sa); err != nil {
			r.close()
			return nil, fmt.Errorf("connection %d: %w", i, err)
		}
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
			r.close()
			return nil, err
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			r.close()
			return nil, err
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			r.close()
			return nil, fmt.Errorf("epoll_ctl: %w", err)
		}
		r.bufs[i] = make([]byte, 0, 512)
	}
	return r, nil
}

func (r *readers) close() {
	for _, fd := range r.fds {
		syscall.Close(fd)
	}
	syscall.Close(r.epfd)
}

// sendAll writes cmd on every connection and clears what was read.
func (r *readers) sendAll(cmd []byte) error {
	for i, fd := range r.fds {
		r.bufs[i] = r.bufs[i][:0]
		r.done[i] = 0
		for b := cmd; len(b) > 0; {
			n, err := syscall.Write(fd, b)
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
				continue // a full send buffer on a tiny command: retry
			}
			if err != nil {
				return fmt.Errorf("connection %d: %w", i, err)
			}
			b = b[n:]
		}
	}
	return nil
}

// collect reads until every connection holds one complete reply, and
// records for each the time since start at which it was complete. It
// gives up after timeout.
func (r *readers) collect(start time.Time, timeout time.Duration) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	left := len(r.fds)
	deadline := start.Add(timeout)
	var chunk [4096]byte
	for left > 0 {
		wait := time.Until(deadline)
		if wait <= 0 {
			return fmt.Errorf("%d of %d clients had no reply after %v", left, len(r.fds), timeout)
		}
		n, err := syscall.EpollWait(r.epfd, r.evs, int(wait/time.Millisecond)+1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range r.evs[:n] {
			i := int(ev.Fd)
			for {
				m, err := syscall.Read(r.fds[i], chunk[:])
				if errors.Is(err, syscall.EINTR) {
					continue
				}
				if errors.Is(err, syscall.EAGAIN) {
					break
				}
				if err != nil {
					return fmt.Errorf("connection %d: %w", i, err)
				}
				if m == 0 {
					return fmt.Errorf("connection %d: closed by the server", i)
				}
				r.bufs[i] = append(r.bufs[i], chunk[:m]...)
			}
			if r.done[i] != 0 {
				return fmt.Errorf("connection %d: more than one reply: %q", i, r.bufs[i])
			}
			end, err := complete(r.bufs[i])
			if err != nil {
				return fmt.Errorf("connection %d: %w in %q", i, err, r.bufs[i])
			}
			if end > 0 {
				r.done[i] = max(time.Since(start), 1)
				left--
			}
		}
	}
	return nil
}
