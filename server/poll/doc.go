// Package poll is the server's event loop's view of the operating system:
// which client sockets are ready, reading and writing them without
// blocking, accepting connections, waking the loop from another goroutine,
// and handing a socket over to a goroutine of its own (a replication
// link). The loop itself, what it does with the bytes, is the server's
// (server/loop.go); this package is the part that differs between systems,
// so that every system runs the same loop.
//
// Backends:
//   - Linux: epoll, level-triggered (poll_epoll.go). Reads, writes and the
//     waits that do not block go through RawSyscall, so the loop keeps its
//     scheduler slot through them (see raw_linux.go for why).
//   - macOS and the BSDs: kqueue (poll_kqueue.go).
//   - Everywhere else (Windows), and on any system built with the tag
//     portablepoll: a goroutine per socket reads ahead into a bounded buffer
//     and another writes, and Wait reports what they left ready
//     (poll_portable.go). make test runs this package's tests with the tag
//     on Linux, so the backend the other systems use is tested too.
//
// Usage (on one goroutine, the loop's; Wake and Shutdown from any):
//
//	p, err := poll.New()
//	lfd, err := p.AddListener(ln)
//	n, woken, err := p.Wait(evs, time.Second) // level-triggered
//	fd, remote, local, err := p.Accept(lfd)   // ErrWouldBlock: none pending
//	err = p.Add(fd, poll.Readable)
//	n, err = p.Read(fd, buf)                  // ErrWouldBlock: nothing now
//	n, err = p.Write(fd, out)                 // ErrWouldBlock: watch Writable
//	conn, err := p.Detach(fd)                 // a net.Conn, out of the poller
//
// Invariants: a descriptor is watched for exactly one Interest at a time;
// an Event's HangUp means the peer closed or the socket failed, whatever
// the interest (with None, only where the system reports it: epoll does).
// A descriptor number is the socket's own on Linux and the BSDs, and a
// number the poller gives elsewhere; either way it is valid until Close or
// Detach.
package poll
