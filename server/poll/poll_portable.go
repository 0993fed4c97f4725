//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly) || portablepoll

package poll

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// Where the system has no readiness API Go can reach (Windows), each
// socket gets two goroutines: one reads ahead into a bounded buffer, one
// writes what the loop handed it; Wait reports the sockets whose state
// matches what they are watched for, level-triggered as epoll. Listeners
// get a goroutine that accepts. The loop above sees the same calls and
// the same events as on Linux. Built on Linux with the tag portablepoll,
// this package's tests run this backend too (make test).

var errWouldBlock = errors.New("poll: would block")

// readAhead bounds what a socket's reader holds before the loop takes
// it: the loop's reads are as large, so a client that pipelines waits in
// the kernel's buffers as it does on Linux. writeAhead bounds what a
// socket's writer holds before Write says ErrWouldBlock.
const (
	readAhead  = 64 << 10
	writeAhead = 64 << 10
	readChunk  = 16 << 10
)

// Poller is the goroutines' shared state, under mu.
type Poller struct {
	mu      sync.Mutex
	conns   map[int]*sock
	lns     map[int]*lsock
	ready   map[int]struct{} // descriptors to look at in the next Wait
	next    int              // the next descriptor number
	woken   bool
	notify  chan struct{} // a Wait may have something to report
	shut    bool
	timer   *time.Timer
	pending []Event
}

// sock is one connection.
type sock struct {
	fd       int
	conn     net.Conn
	interest Interest
	in       []byte // read ahead, not yet taken
	rerr     error  // the read side's end: io.EOF or the error
	out      []byte // handed to the writer, not yet written
	werr     error  // the write side's failure
	blocked  bool   // a Write said ErrWouldBlock: report Writable when drained
	closing  bool   // Close was called: the writer closes once out is written
	readWake *sync.Cond
	outWake  *sync.Cond
	detached bool // the goroutines stop: Detach took the connection
	readers  sync.WaitGroup
}

// lsock is one listener.
type lsock struct {
	ln      net.Listener
	pending []net.Conn
	err     error
}

// New opens a poller.
func New() (*Poller, error) {
	return &Poller{
		conns:  make(map[int]*sock),
		lns:    make(map[int]*lsock),
		ready:  make(map[int]struct{}),
		next:   3,
		notify: make(chan struct{}, 1),
	}, nil
}

// Shut stops the listeners' goroutines and wakes every Wait; the
// connections stay open.
func (p *Poller) Shut() {
	p.mu.Lock()
	p.shut = true
	lns := p.lns
	p.lns = map[int]*lsock{}
	p.mu.Unlock()
	for _, l := range lns {
		l.ln.Close()
	}
	p.signal()
}

// markLocked notes that fd's state changed and wakes Wait.
func (p *Poller) markLocked(fd int) {
	p.ready[fd] = struct{}{}
	p.signal()
}

func (p *Poller) signal() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// AddListener watches ln for connections and returns the number Accept
// takes them from. The listener is closed by Shut.
func (p *Poller) AddListener(ln net.Listener) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fd := p.next
	p.next++
	l := &lsock{ln: ln}
	p.lns[fd] = l
	go p.acceptLoop(fd, l)
	return fd, nil
}

func (p *Poller) acceptLoop(fd int, l *lsock) {
	backoff := 5 * time.Millisecond
	for {
		c, err := l.ln.Accept()
		p.mu.Lock()
		if err == nil {
			l.pending = append(l.pending, c)
			backoff = 5 * time.Millisecond
			p.markLocked(fd)
			p.mu.Unlock()
			continue
		}
		var ne net.Error
		temporary := errors.As(err, &ne) && ne.Timeout() || !p.shut && !errors.Is(err, net.ErrClosed)
		if !temporary || p.shut {
			l.err = err
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		// Out of descriptors or a like failure: try again soon, as
		// net/http's server does.
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

// Accept takes a pending connection of listener lfd.
func (p *Poller) Accept(lfd int) (fd int, remote, local string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.lns[lfd]
	if l == nil || len(l.pending) == 0 {
		return -1, "", "", ErrWouldBlock
	}
	c := l.pending[0]
	l.pending[0] = nil
	l.pending = l.pending[1:]
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	fd = p.next
	p.next++
	s := &sock{fd: fd, conn: c}
	s.readWake = sync.NewCond(&p.mu)
	s.outWake = sync.NewCond(&p.mu)
	p.conns[fd] = s
	s.readers.Add(2)
	go p.readLoop(s)
	go p.writeLoop(s)
	return fd, addrString(c.RemoteAddr()), addrString(c.LocalAddr()), nil
}

// readLoop reads ahead until the buffer is full, the stream ends or the
// connection is detached.
func (p *Poller) readLoop(s *sock) {
	defer s.readers.Done()
	buf := make([]byte, readChunk)
	for {
		n, err := s.conn.Read(buf)
		p.mu.Lock()
		if s.detached {
			// Detach interrupted the read with a deadline: what was read
			// still belongs to the stream.
			s.in = append(s.in, buf[:n]...)
			p.mu.Unlock()
			return
		}
		s.in = append(s.in, buf[:n]...)
		if err != nil {
			s.rerr = err
		}
		p.markLocked(s.fd)
		for len(s.in) >= readAhead && s.rerr == nil && !s.detached {
			s.readWake.Wait()
		}
		stop := s.rerr != nil || s.detached
		p.mu.Unlock()
		if stop {
			return
		}
	}
}

// writeLoop writes what Write handed it, in order.
func (p *Poller) writeLoop(s *sock) {
	defer s.readers.Done()
	var chunk []byte
	p.mu.Lock()
	for {
		for len(s.out) == 0 && s.werr == nil && !s.detached && !s.closing {
			s.outWake.Wait()
		}
		if s.werr != nil || len(s.out) == 0 {
			closing := s.closing
			p.mu.Unlock()
			if closing {
				s.conn.Close()
			}
			return
		}
		chunk, s.out = s.out, chunk[:0]
		p.mu.Unlock()
		_, err := s.conn.Write(chunk)
		p.mu.Lock()
		if err != nil {
			s.werr = err
			p.markLocked(s.fd)
		} else if s.blocked && len(s.out) < writeAhead {
			s.blocked = false
			p.markLocked(s.fd)
		}
		s.outWake.Broadcast() // Detach waits for the writes to end
	}
}

// Add starts watching fd for in.
func (p *Poller) Add(fd int, in Interest) error {
	p.Modify(fd, in)
	return nil
}

// Modify watches fd for in instead.
func (p *Poller) Modify(fd int, in Interest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.conns[fd]; s != nil {
		s.interest = in
		p.markLocked(fd)
	}
}

// readyLocked reports whether s is ready for what it is watched for, and
// whether it hung up.
func (s *sock) readyLocked() (ready, hangUp bool) {
	hangUp = s.werr != nil
	switch s.interest {
	case Readable:
		return len(s.in) > 0 || s.rerr != nil || hangUp, hangUp
	case HangUp:
		return s.rerr != nil || hangUp, hangUp
	case Writable:
		return !s.blocked || hangUp, hangUp
	}
	return false, false
}

// Wait fills evs with the descriptors ready, waiting up to timeout for
// one (0: not at all; negative: for ever). woken reports a Wake since the
// last Wait; its event is not in evs.
func (p *Poller) Wait(evs []Event, timeout time.Duration) (n int, woken bool, err error) {
	var deadline <-chan time.Time
	for {
		p.mu.Lock()
		n = p.collectLocked(evs)
		woken, p.woken = p.woken, false
		shut := p.shut
		p.mu.Unlock()
		if n > 0 || woken || timeout == 0 || shut {
			return n, woken, nil
		}
		if deadline == nil && timeout > 0 {
			if p.timer == nil {
				p.timer = time.NewTimer(timeout)
			} else {
				p.timer.Reset(timeout)
			}
			deadline = p.timer.C
		}
		select {
		case <-p.notify:
		case <-deadline:
			return 0, false, nil
		}
	}
}

// collectLocked turns the descriptors marked since the last Wait into
// events; those still ready stay marked, as a level-triggered poll
// reports them again.
func (p *Poller) collectLocked(evs []Event) int {
	n := 0
	for fd := range p.ready {
		if n == len(evs) {
			break
		}
		if l := p.lns[fd]; l != nil {
			if len(l.pending) > 0 {
				evs[n] = Event{FD: fd}
				n++
				continue
			}
			delete(p.ready, fd)
			continue
		}
		s := p.conns[fd]
		if s == nil {
			delete(p.ready, fd)
			continue
		}
		ready, hangUp := s.readyLocked()
		if !ready {
			delete(p.ready, fd)
			continue
		}
		evs[n] = Event{FD: fd, HangUp: hangUp}
		n++
	}
	return n
}

// Wake makes the loop's Wait return, from any goroutine.
func (p *Poller) Wake() {
	p.mu.Lock()
	p.woken = true
	p.mu.Unlock()
	p.signal()
}

// Read takes what fd's reader holds: ErrWouldBlock when nothing yet,
// 0 and the stream's end or error once it ended.
func (p *Poller) Read(fd int, b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.conns[fd]
	if s == nil {
		return -1, net.ErrClosed
	}
	if len(s.in) == 0 {
		if s.rerr != nil {
			return 0, s.rerr
		}
		return -1, ErrWouldBlock
	}
	n := copy(b, s.in)
	s.in = s.in[:copy(s.in, s.in[n:])]
	s.readWake.Signal()
	return n, nil
}

// Write hands b to fd's writer: ErrWouldBlock while it holds writeAhead
// bytes (Writable is then reported once it wrote them).
func (p *Poller) Write(fd int, b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.conns[fd]
	if s == nil {
		return -1, net.ErrClosed
	}
	if s.werr != nil {
		return -1, s.werr
	}
	if len(s.out) >= writeAhead {
		s.blocked = true
		return -1, ErrWouldBlock
	}
	s.out = append(s.out, b...)
	s.outWake.Signal()
	return len(b), nil
}

// Close forgets fd and closes its connection once the writer has written
// what Write handed it, as closing a socket sends what its buffer holds;
// a peer that does not read gets closeWriteMax to take it.
func (p *Poller) Close(fd int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.conns[fd]
	if s == nil {
		return nil
	}
	delete(p.conns, fd)
	delete(p.ready, fd)
	s.closing = true
	s.conn.SetWriteDeadline(time.Now().Add(closeWriteMax))
	s.outWake.Broadcast()
	s.readWake.Broadcast()
	return nil
}

// closeWriteMax bounds how long a closed connection's last writes wait
// for its peer.
const closeWriteMax = 5 * time.Second

// Shutdown ends fd's connection, from any goroutine: the loop's next read
// of it fails, and the loop closes it.
func (p *Poller) Shutdown(fd int) {
	p.mu.Lock()
	s := p.conns[fd]
	p.mu.Unlock()
	if s != nil {
		s.conn.Close()
	}
}

// Detach takes fd out of the poller and returns its connection, with
// what the reader held ahead and what the writer still had to write
// already written.
func (p *Poller) Detach(fd int) net.Conn {
	p.mu.Lock()
	s := p.conns[fd]
	if s == nil {
		p.mu.Unlock()
		a, b := net.Pipe()
		a.Close()
		b.Close()
		return a
	}
	for len(s.out) > 0 && s.werr == nil {
		s.outWake.Wait()
	}
	s.detached = true
	delete(p.conns, fd)
	delete(p.ready, fd)
	s.readWake.Broadcast()
	s.outWake.Broadcast()
	p.mu.Unlock()
	// A read in progress ends at once; nothing of the stream is lost (see
	// readLoop).
	s.conn.SetReadDeadline(time.Unix(1, 0))
	s.readers.Wait()
	s.conn.SetReadDeadline(time.Time{})
	return &detachedConn{Conn: s.conn, ahead: s.in, err: s.rerr}
}

// detachedConn is a connection that left the poller: its reads return
// what the poller read ahead first.
type detachedConn struct {
	net.Conn
	ahead []byte
	err   error // the stream ended while the poller read it
}

// SyscallConn is the socket's, for its descriptor (CLIENT LIST).
func (c *detachedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

func (c *detachedConn) Read(b []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(b, c.ahead)
		c.ahead = c.ahead[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	return c.Conn.Read(b)
}

// API names the way this backend learns which sockets are ready (INFO's
// multiplexing_api): no readiness API: goroutines read and write each socket.
const API = "goroutines"
