//go:build !linux

package server

import (
	"net"
	"sync/atomic"
)

// eventLoop is Linux only (epoll): elsewhere every client is served by a
// goroutine of its own.
type eventLoop struct{ carries atomic.Int64 }

// newEventLoop returns nil: no event loop here.
func newEventLoop(*Server, []net.Listener) (*eventLoop, error) { return nil, nil }

func (l *eventLoop) run() error { return nil }
func (l *eventLoop) stop()      {}
