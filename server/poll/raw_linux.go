//go:build linux && !portablepoll

package poll

import (
	"syscall"
	"unsafe"
)

// The loop's reads and writes of client sockets, and its epoll waits that
// do not block, bypass Go's syscall bookkeeping (RawSyscall): they never
// block, the sockets being non-blocking, so the loop keeps its scheduler
// slot (P) through them.
//
// Through syscall.Read and syscall.Write, a write that wakes a client is
// often where the kernel preempts the loop's thread for the woken one;
// the runtime's monitor then sees the slot in a syscall for two of its
// ticks and hands it to other goroutines (a flush, a compaction), and the
// loop, back from the write, waits for a slot until one of them yields:
// reads of the oldest entries under heavy writes had a longer tail that
// way, and unpipelined and pipelined writes were slower
// (bench/results/HISTORY.md, "Figures that stood in code
// comments").
//
// A wait that may block still goes through syscall.EpollWait, which
// gives the slot up while the loop has nothing to do.

// rawIO is read(2) or write(2) (trap) of b on fd, returning -1 and the
// errno on failure as syscall.Read and syscall.Write do.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// pollRaw returns the events ready on the epoll instance ep without
// waiting.
func pollRaw(ep int, evs []syscall.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
