package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/proc"
	"github.com/eddy-streams/eddy/bench/internal/resp"
)

// startEddy runs `eddy server` on a free port in dir, its output in
// dir.log, and returns once it answers PING.
func startEddy(bin, dir string, extra ...string) (*proc.Proc, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"server", "--port", strconv.Itoa(port), "--dir", dir, "--nats-port", "0"}, extra...)
	p, _, err := proc.Start("eddy", bin, args, port, dir+".log")
	return p, err
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
