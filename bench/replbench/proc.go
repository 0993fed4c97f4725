package main

import (
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

// proc is one running Eddy.
type proc struct {
	addr string
	cmd  *exec.Cmd
	log  *os.File
	done chan error // receives cmd.Wait's result
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEddy runs `eddy server` on a free port in dir, its output in
// dir.log, and returns once it answers PING.
func startEddy(bin, dir string, extra ...string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	lf, err := os.Create(dir + ".log")
	if err != nil {
		return nil, err
	}
	args := append([]string{"server", "--port", strconv.Itoa(port), "--dir", dir, "--nats-port", "0"}, extra...)
	p := &proc{addr: "127.0.0.1:" + strconv.Itoa(port), cmd: exec.Command(bin, args...), log: lf, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	if err := p.cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	go func() { p.done <- p.cmd.Wait() }()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			lf.Close()
			return nil, fmt.Errorf("eddy exited before answering PING: %v (log %s.log)", err, dir)
		default:
		}
		if c, err := resp.Dial(p.addr, time.Second); err == nil {
			s, err := c.Command("PING")
			c.Close()
			if err == nil && s == "PONG" {
				return p, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.stop()
	return nil, fmt.Errorf("eddy did not answer PING within a minute (log %s.log)", dir)
}

// stop sends SIGTERM and waits for the exit.
func (p *proc) stop() error {
	defer p.log.Close()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("eddy exited with %v", err)
		}
		return err
	case <-time.After(2 * time.Minute):
		p.cmd.Process.Kill()
		<-p.done
		return errors.New("eddy did not stop within 2 minutes of SIGTERM; killed")
	}
}

// info returns one field of an INFO section.
func info(c *resp.Conn, section, field string) (string, error) {
	s, err := c.Command("INFO", section)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v, nil
		}
	}
	return "", nil
}

// waitSynced polls the replica until its link is up and no sync runs.
func waitSynced(c *resp.Conn, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		up, err := info(c, "replication", "master_link_status")
		if err != nil {
			return err
		}
		if up == "up" {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("the replica did not sync within %v", timeout)
}
