//go:build linux

package server

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
// loop, back from the write, waits for a slot until one of them yields.
// bench/bigbench, XRANGE of the oldest 100 of 10M entries under 100 MB of
// writes (a 9-second round each, alternating builds): p99 0.88x over 13
// pairs (medians 3.64 against 4.04 ms) and 0.91x over 6 more. perf
// sched_switch of the loop thread in one such round: 745 waits for a slot
// after a syscall (runtime.exitsyscallNoP) before, 98 after. Unpipelined
// XADD gained 1-8% and pipelined 8% (README, "The network path").
//
// A wait that may block still goes through syscall.EpollWait, which
// gives the slot up while the loop has nothing to do.

// readNB reads from the non-blocking descriptor fd.
func readNB(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, p) }

// writeNB writes to the non-blocking descriptor fd.
func writeNB(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2) (trap) of p on fd, returning -1 and the
// errno on failure as syscall.Read and syscall.Write do.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// pollNB returns the events ready on the epoll instance ep without
// waiting.
func pollNB(ep int, evs []syscall.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// epollWait waits up to wait milliseconds for events on ep: a poll first,
// which keeps the loop's slot, and a blocking wait only if nothing is
// ready.
func epollWait(ep int, evs []syscall.EpollEvent, wait int) (int, error) {
	n, err := pollNB(ep, evs)
	if n > 0 || err != nil || wait == 0 {
		return n, err
	}
	return syscall.EpollWait(ep, evs, wait)
}
