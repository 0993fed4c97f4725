package quiet

import (
	"net"
	"os"
	"testing"
	"time"
)

func TestParsePID(t *testing.T) {
	for _, tc := range []struct {
		info string
		want int
		ok   bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\nprocess_id:4242\r\ntcp_port:6379\r\n", 4242, true},
		{"# Server\r\nprocess_id:7", 7, true},
		{"# Server\r\nredis_version:7.0.15\r\n", 0, false},
		{"process_id:x\r\n", 0, false},
	} {
		got, err := parsePID([]byte(tc.info))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parsePID(%q) = %d, %v; want %d, ok %v", tc.info, got, err, tc.want, tc.ok)
		}
	}
}

func TestCPUCountsWork(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the counter shows 20 ms more (a CPU-time reading, not a
	// wall-clock wait), bounded in case it never moves.
	for start := time.Now(); time.Since(start) < 10*time.Second; {
		now, err := CPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now-before >= 20*time.Millisecond {
			return
		}
	}
	t.Fatal("CPU did not count 20 ms of spinning in 10 s")
}

func TestCPUNoProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := CPU(1 << 30); err == nil {
		t.Fatal("CPU of a process that does not exist: no error")
	}
}

func TestLocalPIDOnlyLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, a := range []string{"192.0.2.1:6379", "example.com:6379", "no-port", addr} {
		if pid := LocalPID(a); pid != 0 {
			t.Errorf("LocalPID(%q) = %d, want 0", a, pid)
		}
	}
}
