//go:build linux

package storage

import (
	"io"
	"syscall"
	"unsafe"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// logFile is a write-ahead log file whose writes and syncs are raw
// system calls while the store syncs every write (appendfsync always).
// Through Go's syscall package, a goroutine in a system call lends its
// scheduler slot (P) to the runtime: the monitor, woken by the call,
// takes the slot back during the fdatasync (half a millisecond, two of
// its ticks) and hands it on, the log writer, back from the call, finds
// a slot again before it can wake the writers waiting, and the monitor,
// busy every sync, keeps polling at its shortest interval, a visible
// share of the server's CPU. Side by side, raw calls made XADD with
// always faster, pipelined most (bench/results/HISTORY.md, "The network
// path: one event loop" and "Figures that stood in code comments").
//
// The cost: the log writer's goroutine keeps its slot through the
// fdatasync, so other goroutines (flushes, compactions) have one slot
// fewer meanwhile, and a collection that stops the world waits for the
// call to end. With always each sync covers at most a group of writes,
// so that is a millisecond or so; with everysec a sync may cover a
// second of writes and take far longer, so the calls stay Go's.
//
// A sync is Go's call too whenever goroutines already wait for a slot
// (DB.slotWanted): with two slots, one the event loop's and the other
// held through a raw fdatasync, the goroutine that hands the sync's
// result to the loop, a compaction and the collector queued behind it.
// Under XADD -P 16 with always on a store still compacting, Go's call
// then gave a higher rate and, with the loop's wait for its sync
// (waitUnlocked, server/loop.go), a shorter tail; on a fresh store,
// and unpipelined, the builds were level (bench/results/HISTORY.md,
// "Figures that stood in code comments").
type logFile struct {
	vfs.File
	fd uintptr
	db *DB
}

// rawLogFile wraps f, a log file, unless it has no descriptor (an
// in-memory file system).
func rawLogFile(f vfs.File, db *DB) vfs.File {
	fd := f.Fd()
	if fd == vfs.InvalidFd {
		return f
	}
	return &logFile{File: f, fd: fd, db: db}
}

func (f *logFile) Write(p []byte) (int, error) {
	if f.db.syncMode() != SyncAlways {
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
	if f.db.syncMode() != SyncAlways || f.db.slotWanted != nil && f.db.slotWanted() {
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
		f.db.rawLogSyncs.Add(1)
		return nil
	}
}
