//go:build !linux

package server

import "net"

// eventLoop is Linux only (epoll): elsewhere every client is served by a
// goroutine of its own.
type eventLoop struct{}

// newEventLoop returns nil: no event loop here.
func newEventLoop(*Server, []net.Listener) (*eventLoop, error) { return nil, nil }

func (l *eventLoop) run() error { return nil }
func (l *eventLoop) stop()      {}
