//go:build linux && !portablepoll

package poll

import (
	"fmt"
	"net"
	"syscall"
	"time"
)

// Poller is an epoll instance, level-triggered, with a pipe that wakes
// its waits.
type Poller struct {
	ep   int
	raw  []syscall.EpollEvent // Wait's buffer, as long as the caller's
	lns  []listener
	wake *waker
}

// New opens a poller.
func New() (*Poller, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("poll: %w", err)
	}
	p := &Poller{ep: ep}
	if p.wake, err = newWaker(); err != nil {
		p.Shut()
		return nil, err
	}
	if err := p.ctl(syscall.EPOLL_CTL_ADD, p.wake.r, syscall.EPOLLIN); err != nil {
		p.Shut()
		return nil, err
	}
	return p, nil
}

// Shut closes the poller, its wake pipe and its listeners' dups (not the
// connections).
func (p *Poller) Shut() {
	shut(p.lns, p.wake, p.ep)
	p.lns, p.ep = nil, -1
}

// AddListener watches ln for connections and returns the descriptor
// Accept takes them from.
func (p *Poller) AddListener(ln net.Listener) (int, error) {
	l, err := newListener(ln)
	if err != nil {
		return -1, err
	}
	p.lns = append(p.lns, l)
	return l.fd, p.ctl(syscall.EPOLL_CTL_ADD, l.fd, syscall.EPOLLIN)
}

// Accept takes a pending connection of listener lfd, non-blocking.
func (p *Poller) Accept(lfd int) (fd int, remote, local string, err error) {
	for {
		fd, sa, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		if err != nil {
			retry, err := acceptError(err)
			if retry {
				continue
			}
			return -1, "", "", err
		}
		remote, local := accepted(fd, sa)
		return fd, remote, local, nil
	}
}

// Add starts watching fd for in.
func (p *Poller) Add(fd int, in Interest) error {
	return p.ctl(syscall.EPOLL_CTL_ADD, fd, epollEvents(in))
}

// Modify watches fd for in instead.
func (p *Poller) Modify(fd int, in Interest) {
	p.ctl(syscall.EPOLL_CTL_MOD, fd, epollEvents(in))
}

// forget takes fd out of the set without closing it (Detach).
func (p *Poller) forget(fd int) {
	syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_DEL, fd, nil)
}

func (p *Poller) ctl(op, fd int, events uint32) error {
	ev := syscall.EpollEvent{Events: events, Fd: int32(fd)}
	if err := syscall.EpollCtl(p.ep, op, fd, &ev); err != nil {
		return fmt.Errorf("poll: epoll_ctl: %w", err)
	}
	return nil
}

// epollEvents is what epoll watches for in. EPOLLERR and EPOLLHUP are
// always reported, None included.
func epollEvents(in Interest) uint32 {
	switch in {
	case Readable:
		return syscall.EPOLLIN | syscall.EPOLLRDHUP
	case HangUp:
		return syscall.EPOLLRDHUP
	case Writable:
		return syscall.EPOLLOUT
	}
	return 0
}

// Wait fills evs with the descriptors ready, waiting up to timeout for
// one (0: not at all; negative: for ever). woken reports a Wake since the
// last Wait; its event is not in evs.
func (p *Poller) Wait(evs []Event, timeout time.Duration) (n int, woken bool, err error) {
	if cap(p.raw) < len(evs) {
		p.raw = make([]syscall.EpollEvent, len(evs))
	}
	raw := p.raw[:len(evs)]
	// A poll first, which keeps the loop's slot; a blocking wait only if
	// nothing is ready.
	n, err = pollRaw(p.ep, raw)
	if n == 0 && err == nil && timeout != 0 {
		n, err = syscall.EpollWait(p.ep, raw, waitMillis(timeout))
	}
	if err == syscall.EINTR {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("poll: epoll_wait: %w", err)
	}
	k := 0
	for _, ev := range raw[:n] {
		if int(ev.Fd) == p.wake.r {
			woken = true
			p.wake.drain()
			continue
		}
		evs[k] = Event{FD: int(ev.Fd), HangUp: ev.Events&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0}
		k++
	}
	return k, woken, nil
}

// Wake makes the loop's Wait return, from any goroutine.
func (p *Poller) Wake() { p.wake.wake() }

// Read reads what fd has, non-blocking: ErrWouldBlock when nothing.
func (p *Poller) Read(fd int, b []byte) (int, error) {
	n, err := rawIO(syscall.SYS_READ, fd, b)
	if err == syscall.EINTR {
		err = ErrWouldBlock
	}
	return n, err
}

// Write writes what fd takes of b, non-blocking: ErrWouldBlock when
// nothing.
func (p *Poller) Write(fd int, b []byte) (int, error) {
	for {
		n, err := rawIO(syscall.SYS_WRITE, fd, b)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// API names the way this backend learns which sockets are ready (INFO's
// multiplexing_api): epoll, as Redis reports it on Linux.
const API = "epoll"

func nonblockingPipe() (r, w int, err error) {
	var fds [2]int
	err = syscall.Pipe2(fds[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	return fds[0], fds[1], err
}
