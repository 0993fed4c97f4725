package tests

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplicaOfUnblocksDifferential: REPLICAOF host port answers every
// blocked client (XREAD BLOCK, WAIT) with the same -UNBLOCKED error as
// Redis 7.0, and closes its connection without running what it sent
// behind the blocked command; the same transcript from both servers.
func TestReplicaOfUnblocksDifferential(t *testing.T) {
	redis, eddy := startRedis(t), startEddy(t)
	transcript := func(p *serverProc) string {
		t.Helper()
		addr := p.Addr()
		port, err := freePort() // nothing listens there: the link never comes up
		if err != nil {
			t.Fatal(err)
		}
		x, w, c := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		var out bytes.Buffer
		if err := x.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
			t.Fatal(err)
		}
		if err := x.Send("PING"); err != nil {
			t.Fatal(err)
		}
		if err := w.Send("WAIT", "1", "0"); err != nil {
			t.Fatal(err)
		}
		waitBlocked(t, p.Client(), 2)
		reply, err := c.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "REPLICAOF 127.0.0.1 <port> -> %q\n", reply)
		for _, r := range []*rawConn{x, w} {
			reply, err := r.Read()
			fmt.Fprintf(&out, "%q %v; closed: %v\n", reply, err, r.WaitClosed(5*time.Second))
		}
		reply, err = c.Do("REPLICAOF", "NO", "ONE")
		fmt.Fprintf(&out, "REPLICAOF NO ONE -> %q %v\n", reply, err)
		return out.String()
	}
	want, got := transcript(redis.serverProc), transcript(eddy.serverProc)
	if got != want {
		t.Errorf("Eddy:\n%s\nRedis:\n%s", got, want)
	}
	if !bytes.Contains([]byte(want), []byte("UNBLOCKED force unblock")) {
		t.Errorf("Redis did not unblock as expected:\n%s", want)
	}
}

// TestWaitUnblockDifferential: CLIENT UNBLOCK of a client in WAIT, with
// and without ERROR, gets the replies Redis 7.0 sends (the count of
// replicas so far, or -UNBLOCKED).
func TestWaitUnblockDifferential(t *testing.T) {
	redis, eddy := startRedis(t), startEddy(t)
	transcript := func(p *serverProc) string {
		t.Helper()
		addr := p.Addr()
		var out bytes.Buffer
		for _, mode := range [][]string{nil, {"ERROR"}} {
			a, b := dialRaw(t, addr), dialRaw(t, addr)
			id, err := a.Do("CLIENT", "ID")
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Send("WAIT", "1", "0"); err != nil {
				t.Fatal(err)
			}
			waitBlocked(t, p.Client(), 1)
			args := append([]string{"CLIENT", "UNBLOCK", string(bytes.TrimSpace(id[1:]))}, mode...)
			unblocked, err := b.Do(args...)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := a.Read()
			fmt.Fprintf(&out, "UNBLOCK %v -> %q; WAIT -> %q %v\n", mode, unblocked, reply, err)
			a.Close()
			b.Close()
		}
		return out.String()
	}
	got, want := transcript(eddy.serverProc), transcript(redis.serverProc)
	if got != want {
		t.Errorf("Eddy:\n%s\nRedis:\n%s", got, want)
	}
	if !strings.Contains(want, "-UNBLOCKED") {
		t.Errorf("Redis did not unblock WAIT with an error as expected:\n%s", want)
	}
}
