package poll

import (
	"errors"
	"net"
	"time"
)

// Interest is what a descriptor is watched for.
type Interest uint8

const (
	// None watches nothing: the loop mutes a client whose replies wait,
	// and reads nothing from it until it watches it again.
	None Interest = iota
	// Readable reports data, the end of the stream or an error.
	Readable
	// HangUp reports only the end of the stream or an error: data may
	// arrive and wait unread (a client whose command is blocked).
	HangUp
	// Writable reports that the socket takes writes again (replies that
	// did not fit), or an error; nothing is read meanwhile.
	Writable
)

// Event is a descriptor that is ready for what it is watched for.
type Event struct {
	FD int
	// HangUp: the peer closed the connection or the socket failed.
	HangUp bool
}

// ErrWouldBlock is returned by Read, Write and Accept when the call would
// have to wait: nothing to read, no room to write, no connection pending.
var ErrWouldBlock = errWouldBlock

// ErrTooManyFiles is returned by Accept when the process is out of
// descriptors: the connection stays pending, and its listener ready.
var ErrTooManyFiles = errors.New("poll: out of file descriptors")

// waitMillis turns Wait's timeout into epoll's and kqueue's milliseconds,
// rounded up so that a deadline is never woken for early: negative is
// forever.
func waitMillis(d time.Duration) int {
	if d < 0 {
		return -1
	}
	return int((d + time.Millisecond - 1) / time.Millisecond)
}

// addrString formats a socket address as net.Addr does, "" when unknown.
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
