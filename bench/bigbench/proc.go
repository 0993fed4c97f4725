package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/resp"
)

// proc is one running server.
type proc struct {
	name string
	addr string
	cmd  *exec.Cmd
	log  *os.File
	done chan error // receives cmd.Wait's result
}

// freePort asks the kernel for a port nobody listens on. Another process
// could take it before the server binds it; bench.sh takes the same risk.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs bin with args, its output appended to logPath, and returns
// once the server answers PING with PONG (not -LOADING): the time from
// just before exec to that reply is the start-up time.
func start(name, bin string, args []string, port int, logPath string) (*proc, time.Duration, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	p := &proc{name: name, addr: "127.0.0.1:" + strconv.Itoa(port), log: lf, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	t0 := time.Now()
	if err := p.cmd.Start(); err != nil {
		lf.Close()
		return nil, 0, err
	}
	go func() { p.done <- p.cmd.Wait() }()
	if err := p.waitPong(10 * time.Minute); err != nil {
		p.kill()
		return nil, 0, fmt.Errorf("%s: %w (log: %s)", name, err, logPath)
	}
	return p, time.Since(t0), nil
}

// waitPong polls until a PING gets PONG. Redis accepts connections while
// it loads its data set and answers -LOADING; that is not a reply.
func (p *proc) waitPong(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("exited before answering PING: %v", err)
		default:
		}
		c, err := resp.Dial(p.addr, time.Second)
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

// stop sends SIGTERM and waits for the process to exit (Redis and Eddy
// both shut down cleanly on it).
func (p *proc) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-p.done:
		p.log.Close()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s exited with %v", p.name, err)
		}
		return err
	case <-time.After(5 * time.Minute):
		p.kill()
		return fmt.Errorf("%s did not stop within 5 minutes of SIGTERM; killed", p.name)
	}
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
	p.log.Close()
}

// memory is a process's resident set from /proc/<pid>/status, bytes.
type memory struct {
	RSS  int64 `json:"rss"`  // VmRSS: resident now
	Peak int64 `json:"peak"` // VmHWM: the most ever resident
}

func (p *proc) memory() (memory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
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

// dirSize is the size of a directory tree, in total and by kind of file.
type dirSize struct {
	Bytes     int64            `json:"bytes"`     // apparent sizes (du -sb)
	Allocated int64            `json:"allocated"` // blocks on disk (du -s)
	ByKind    map[string]int64 `json:"bytes_by_kind"`
}

// kindOf groups a store's files: Pebble's tables, logs (WAL), manifests
// and options; Redis's RDB and AOF files.
func kindOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "sst"
	case strings.HasSuffix(name, ".blob"):
		return "blob"
	case strings.HasSuffix(name, ".log"):
		return "wal"
	case strings.HasPrefix(name, "MANIFEST"):
		return "manifest"
	case strings.Contains(name, ".aof"):
		// Before .rdb: Redis 7's AOF base file is appendonly.aof.1.base.rdb.
		return "aof"
	case strings.HasSuffix(name, ".rdb"):
		return "rdb"
	}
	return "other"
}

func measureDir(dir string) (dirSize, error) {
	d := dirSize{ByKind: map[string]int64{}}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		d.Bytes += info.Size()
		d.ByKind[kindOf(e.Name())] += info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			d.Allocated += st.Blocks * 512
		}
		return nil
	})
	return d, err
}
