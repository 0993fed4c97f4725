//go:build linux

package storage

import (
	"io"
	"syscall"
	"unsafe"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// logFile is a write-ahead log file whose writes and syncs are raw
// system calls while a caller waits for the sync inline. Through Go's
// syscall package, a goroutine in a system call lends its scheduler slot
// (P) to the runtime: the monitor, woken by the call, takes the slot
// back during the fdatasync (half a millisecond, two of its ticks) and
// hands it on, and the log writer, back from the call, finds a slot
// again before it can wake the caller. The event loop with appendfsync
// always syncs after every small group, parked until the sync ends, so
// those hand-offs were on every reply's path: raw calls made unpipelined
// XADD 5-9% faster (README, "The network path"). Only then: the log
// writer's goroutine keeps its slot through the call, and a collection
// that stops the world waits for the call to end, which is no cost while
// the only other work is waiting for the same sync.
type logFile struct {
	vfs.File
	fd    uintptr
	calls *logCalls
}

// inlineLogFile wraps f, a log file, unless it has no descriptor (an
// in-memory file system).
func inlineLogFile(f vfs.File, calls *logCalls) vfs.File {
	fd := f.Fd()
	if fd == vfs.InvalidFd {
		return f
	}
	return &logFile{File: f, fd: fd, calls: calls}
}

func (f *logFile) Write(p []byte) (int, error) {
	if f.calls.inline.Load() == 0 {
		return f.File.Write(p)
	}
	n := 0
	for n < len(p) {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, f.fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return n, e
		case m == 0:
			return n, io.ErrShortWrite
		}
		n += int(m)
	}
	return n, nil
}

func (f *logFile) SyncData() error {
	if f.calls.inline.Load() == 0 {
		return f.File.SyncData()
	}
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_FDATASYNC, f.fd, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		f.calls.raw.Add(1)
		return nil
	}
}
