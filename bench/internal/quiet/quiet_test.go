package quiet

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// A server on loopback that reports this process's id: LocalPID asks it
// (INFO server) and finds the process in /proc.
func TestLocalPIDAsksTheServer(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 256)
		c.Read(buf) // the INFO server command, in one segment on loopback
		info := "# Server\r\nprocess_id:" + strconv.Itoa(os.Getpid()) + "\r\n"
		c.Write([]byte("$" + strconv.Itoa(len(info)) + "\r\n" + info + "\r\n"))
	}()
	if got, want := LocalPID(ln.Addr().String()), os.Getpid(); got != want {
		t.Fatalf("LocalPID = %d, want %d", got, want)
	}
}

// spinner starts a process that burns a CPU for a fixed amount of work,
// then creates the file done and sleeps: quiet from then on.
func spinner(t *testing.T) (cmd *exec.Cmd, done string) {
	t.Helper()
	done = filepath.Join(t.TempDir(), "done")
	cmd = exec.Command("bash", "-c", `for ((i = 0; i < 300000; i++)); do :; done; : >"$1"; exec sleep 60`, "bash", done)
	if err := cmd.Start(); err != nil {
		t.Skip("no bash:", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, done
}

// checkWaited fails unless the spinner had finished its work when the
// wait returned, and burns no more after.
func checkWaited(t *testing.T, pid int, done string) {
	t.Helper()
	at, err := CPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(done); err != nil {
		t.Fatalf("returned after %v of the spinner's CPU, before its work was done", at)
	}
	after, err := CPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after-at > Budget {
		t.Fatalf("the spinner still burned %v after the wait", after-at)
	}
}

func TestWaitReturnsOnceQuiet(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	cmd, done := spinner(t)
	if err := Wait(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	checkWaited(t, cmd.Process.Pid, done)
}

// The shell scripts' wait_quiet (bench/lib.sh) does the same.
func TestShellWaitQuiet(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	cmd, done := spinner(t)
	out, err := exec.Command("bash", "-c", `. ../../lib.sh && wait_quiet "$1"`, "bash", strconv.Itoa(cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		t.Fatalf("wait_quiet: %v: %s", err, out)
	}
	checkWaited(t, cmd.Process.Pid, done)
}
