// Package quiet waits until a server process has stopped working in the
// background, so that a side-by-side round of one server does not share
// the CPUs with what the other still does after its own round (Eddy's
// flushes and compactions). bench/lib.sh's wait_quiet is the same for the
// shell scripts; bench/results/HISTORY.md, "How the benchmarks were
// run", has the bias it removed.
package quiet

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/resp"
)

// Thresholds: quiet is less than Budget of CPU in one Window; Wait gives
// up after Max.
const (
	Budget = 5 * time.Millisecond
	Window = 100 * time.Millisecond
	Max    = 30 * time.Second
)

// PID asks the server at addr for its process id (INFO server's
// process_id, which Redis and Eddy both report).
func PID(addr string) (int, error) {
	c, err := resp.Dial(addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.Send(resp.AppendCommand(nil, "INFO", "server")); err != nil {
		return 0, err
	}
	info, _, err := c.Bulk(nil)
	if err != nil {
		return 0, err
	}
	return parsePID(info)
}

// LocalPID is PID for a server on this machine's loopback address whose
// process /proc shows, and 0 otherwise (a server elsewhere, whose process
// this machine cannot watch).
func LocalPID(addr string) int {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	pid, err := PID(addr)
	if err != nil {
		return 0
	}
	if _, err := CPU(pid); err != nil {
		return 0
	}
	return pid
}

func parsePID(info []byte) (int, error) {
	for line := range bytes.Lines(info) {
		if v, ok := bytes.CutPrefix(line, []byte("process_id:")); ok {
			return strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	return 0, errors.New("quiet: INFO server has no process_id")
}

// CPU returns the CPU time the process pid and its children (Redis's AOF
// rewrite) have used so far: the sum of their threads' schedstat.
func CPU(pid int) (time.Duration, error) {
	pids := []string{strconv.Itoa(pid)}
	kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, k := range kids {
		b, err := os.ReadFile(k)
		if err == nil {
			pids = append(pids, strings.Fields(string(b))...)
		}
	}
	var total time.Duration
	for i, p := range pids {
		stats, _ := filepath.Glob("/proc/" + p + "/task/*/schedstat")
		if i == 0 && len(stats) == 0 {
			return 0, fmt.Errorf("quiet: no process %d", pid)
		}
		for _, s := range stats {
			b, err := os.ReadFile(s)
			if err != nil {
				continue // the thread ended
			}
			f := strings.Fields(string(b))
			if len(f) == 0 {
				continue
			}
			ns, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("quiet: %s: %w", s, err)
			}
			total += time.Duration(ns)
		}
	}
	return total, nil
}

// Wait waits until the process pid uses less than Budget of CPU in a
// Window, or Max has passed (then it returns nil: a busy machine slows the
// benchmark, it does not fail it).
func Wait(pid int) error {
	prev, err := CPU(pid)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(Max); time.Now().Before(deadline); {
		// Sampling another process's counters: nothing to wait on.
		time.Sleep(Window)
		now, err := CPU(pid)
		if err != nil {
			return err
		}
		if now-prev < Budget {
			return nil
		}
		prev = now
	}
	fmt.Fprintf(os.Stderr, "bench: process %d still busy after %v; going on\n", pid, Max)
	return nil
}
