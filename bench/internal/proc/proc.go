// Package proc runs the servers the bench programs measure (Eddy or
// redis-server) as child processes: on a free port, output to a log file,
// ready once they answer PING with PONG, stopped with SIGTERM.
package proc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/resp"
)

// Proc is one running server.
type Proc struct {
	Name string // for errors and results: "eddy", "redis", "primary", ...
	Addr string // 127.0.0.1:port
	cmd  *exec.Cmd
	log  *os.File
	done chan error // receives cmd.Wait's result
}

// FreePort asks the kernel for a port nobody listens on. Another process
// could take it before the server binds it; bench.sh takes the same risk.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs bin with args (which must make it listen on port), its
// output appended to logPath, and returns once the server answers PING
// with PONG (not -LOADING): the time from just before exec to that reply
// is the start-up time.
func Start(name, bin string, args []string, port int, logPath string) (*Proc, time.Duration, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	p := &Proc{Name: name, Addr: "127.0.0.1:" + strconv.Itoa(port), log: lf, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	t0 := time.Now()
	if err := p.cmd.Start(); err != nil {
		lf.Close()
		return nil, 0, err
	}
	go func() { p.done <- p.cmd.Wait() }()
	if err := p.waitPong(10 * time.Minute); err != nil {
		p.Kill()
		return nil, 0, fmt.Errorf("%s: %w (log: %s)", name, err, logPath)
	}
	return p, time.Since(t0), nil
}

// waitPong polls until a PING gets PONG. Redis accepts connections while
// it loads its data set and answers -LOADING; that is not a reply.
func (p *Proc) waitPong(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("exited before answering PING: %v", err)
		default:
		}
		c, err := resp.Dial(p.Addr, time.Second)
		if err != nil {
			time.Sleep(time.Millisecond)
			continue
		}
		for time.Now().Before(deadline) {
			s, err := c.Command("PING")
			if err == nil && s == "PONG" {
				c.Close()
				return nil
			}
			var se resp.ServerError
			if !errors.As(err, &se) || !strings.HasPrefix(string(se), "LOADING") {
				break
			}
			time.Sleep(time.Millisecond)
		}
		c.Close()
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("no PONG within %v", timeout)
}

// Stop sends SIGTERM and waits for the process to exit (Redis and Eddy
// both shut down cleanly on it).
func (p *Proc) Stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.Kill() // reaps it and closes its log
		return err
	}
	select {
	case err := <-p.done:
		p.log.Close()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s exited with %v", p.Name, err)
		}
		return err
	case <-time.After(5 * time.Minute):
		p.Kill()
		return fmt.Errorf("%s did not stop within 5 minutes of SIGTERM; killed", p.Name)
	}
}

// Kill kills the process and waits for it.
func (p *Proc) Kill() {
	p.cmd.Process.Kill()
	<-p.done
	p.log.Close()
}

// Memory is a process's resident set from /proc/<pid>/status, bytes.
type Memory struct {
	RSS  int64 `json:"rss"`  // VmRSS: resident now
	Peak int64 `json:"peak"` // VmHWM: the most ever resident
}

func (p *Proc) Memory() (Memory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	var m Memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) != 2 || fs[1] != "kB" {
			return m, fmt.Errorf("/proc status: odd %s line %q", k, v)
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return m, err
		}
		if k == "VmRSS" {
			m.RSS = n << 10
		} else {
			m.Peak = n << 10
		}
	}
	if m.RSS == 0 {
		return m, errors.New("/proc status: no VmRSS")
	}
	return m, sc.Err()
}
