//go:build (darwin || freebsd || netbsd || openbsd || dragonfly) && !portablepoll

package poll

import (
	"fmt"
	"net"
	"syscall"
	"time"
)

// Poller is a kqueue, with a pipe that wakes its waits.
//
// kqueue watches a socket with two filters, read and write, where epoll
// takes one set of events; HangUp has no filter of its own: the read
// filter is kept edge-triggered (EV_CLEAR) and its events are reported
// only with EV_EOF, so data that arrives meanwhile waits unread, as with
// epoll's EPOLLRDHUP. With None both filters are off, and a hang-up is
// seen once the socket is watched again.
type Poller struct {
	kq       int
	raw      []syscall.Kevent_t
	changes  []syscall.Kevent_t
	interest map[int]Interest // what each descriptor is watched for
	lns      []listener
	wake     *waker
}

// New opens a poller.
func New() (*Poller, error) {
	kq, err := syscall.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("poll: %w", err)
	}
	syscall.CloseOnExec(kq)
	p := &Poller{kq: kq, interest: make(map[int]Interest)}
	if p.wake, err = newWaker(); err != nil {
		p.Shut()
		return nil, err
	}
	p.filter(p.wake.r, syscall.EVFILT_READ, syscall.EV_ADD|syscall.EV_ENABLE)
	if err := p.flush(); err != nil {
		p.Shut()
		return nil, err
	}
	return p, nil
}

// Shut closes the poller, its wake pipe and its listeners' dups (not the
// connections).
func (p *Poller) Shut() {
	shut(p.lns, p.wake, p.kq)
	p.lns, p.kq = nil, -1
}

// AddListener watches ln for connections and returns the descriptor
// Accept takes them from.
func (p *Poller) AddListener(ln net.Listener) (int, error) {
	l, err := newListener(ln)
	if err != nil {
		return -1, err
	}
	p.lns = append(p.lns, l)
	return l.fd, p.Add(l.fd, Readable)
}

// Accept takes a pending connection of listener lfd, non-blocking.
func (p *Poller) Accept(lfd int) (fd int, remote, local string, err error) {
	for {
		fd, sa, err := syscall.Accept(lfd)
		if err != nil {
			retry, err := acceptError(err)
			if retry {
				continue
			}
			return -1, "", "", err
		}
		syscall.CloseOnExec(fd)
		if err := syscall.SetNonblock(fd, true); err != nil {
			syscall.Close(fd)
			return -1, "", "", err
		}
		remote, local := accepted(fd, sa)
		return fd, remote, local, nil
	}
}

// Add starts watching fd for in.
func (p *Poller) Add(fd int, in Interest) error {
	p.interest[fd] = None
	p.filter(fd, syscall.EVFILT_READ, syscall.EV_ADD|syscall.EV_DISABLE)
	p.filter(fd, syscall.EVFILT_WRITE, syscall.EV_ADD|syscall.EV_DISABLE)
	p.setInterest(fd, in)
	if err := p.flush(); err != nil {
		delete(p.interest, fd)
		return err
	}
	return nil
}

// Modify watches fd for in instead.
func (p *Poller) Modify(fd int, in Interest) {
	p.setInterest(fd, in)
	p.flush()
}

// setInterest queues the filter changes from fd's interest to in.
func (p *Poller) setInterest(fd int, in Interest) {
	if p.interest[fd] == in {
		return
	}
	p.interest[fd] = in
	read, write := uint16(syscall.EV_DISABLE), uint16(syscall.EV_DISABLE)
	switch in {
	case Readable:
		read = syscall.EV_ENABLE
	case HangUp:
		read = syscall.EV_ENABLE | syscall.EV_CLEAR
	case Writable:
		write = syscall.EV_ENABLE
	}
	// EV_ADD again resets EV_CLEAR from a HangUp before it.
	p.filter(fd, syscall.EVFILT_READ, syscall.EV_ADD|read)
	p.filter(fd, syscall.EVFILT_WRITE, syscall.EV_ADD|write)
}

// forget takes fd out of the set without closing it (Detach).
func (p *Poller) forget(fd int) {
	delete(p.interest, fd)
	p.filter(fd, syscall.EVFILT_READ, syscall.EV_DELETE)
	p.filter(fd, syscall.EVFILT_WRITE, syscall.EV_DELETE)
	p.flush()
}

func (p *Poller) filter(fd int, filter int16, flags uint16) {
	var ev syscall.Kevent_t
	syscall.SetKevent(&ev, fd, int(filter), int(flags))
	p.changes = append(p.changes, ev)
}

// flush hands the queued filter changes to the kqueue.
func (p *Poller) flush() error {
	if len(p.changes) == 0 {
		return nil
	}
	_, err := syscall.Kevent(p.kq, p.changes, nil, nil)
	p.changes = p.changes[:0]
	if err != nil {
		return fmt.Errorf("poll: kevent: %w", err)
	}
	return nil
}

// Wait fills evs with the descriptors ready, waiting up to timeout for
// one (0: not at all; negative: for ever). woken reports a Wake since the
// last Wait; its event is not in evs.
func (p *Poller) Wait(evs []Event, timeout time.Duration) (n int, woken bool, err error) {
	if cap(p.raw) < len(evs) {
		p.raw = make([]syscall.Kevent_t, len(evs))
	}
	raw := p.raw[:len(evs)]
	var ts *syscall.Timespec
	if timeout >= 0 {
		t := syscall.NsecToTimespec(int64(time.Duration(waitMillis(timeout)) * time.Millisecond))
		ts = &t
	}
	n, err = syscall.Kevent(p.kq, nil, raw, ts)
	if err == syscall.EINTR {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("poll: kevent: %w", err)
	}
	k := 0
	for _, ev := range raw[:n] {
		fd := int(ev.Ident)
		if fd == p.wake.r {
			woken = true
			p.wake.drain()
			continue
		}
		eof := ev.Flags&(syscall.EV_EOF|syscall.EV_ERROR) != 0
		if p.interest[fd] == HangUp && !eof {
			continue // data for a client that reads nothing now
		}
		if k > 0 && evs[k-1].FD == fd {
			evs[k-1].HangUp = evs[k-1].HangUp || eof // both filters fired
			continue
		}
		evs[k] = Event{FD: fd, HangUp: eof && ev.Filter == syscall.EVFILT_WRITE}
		k++
	}
	return k, woken, nil
}

// Wake makes the loop's Wait return, from any goroutine.
func (p *Poller) Wake() { p.wake.wake() }

// Read reads what fd has, non-blocking: ErrWouldBlock when nothing.
func (p *Poller) Read(fd int, b []byte) (int, error) {
	n, err := syscall.Read(fd, b)
	if err == syscall.EINTR {
		err = ErrWouldBlock
	}
	return n, err
}

// Write writes what fd takes of b, non-blocking: ErrWouldBlock when
// nothing.
func (p *Poller) Write(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Write(fd, b)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// API names the way this backend learns which sockets are ready (INFO's
// multiplexing_api): kqueue, as Redis reports it on macOS and the BSDs.
const API = "kqueue"

func nonblockingPipe() (r, w int, err error) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		return -1, -1, err
	}
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
		syscall.SetNonblock(fd, true)
	}
	return fds[0], fds[1], nil
}
