package tests

import (
	"context"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replication end to end: a primary and a replica, both the real binary.

func skipAgainstRedis(t *testing.T) {
	t.Helper()
	eddyOnly(t, "replication tests drive two Eddy processes")
}

// startReplica starts an Eddy following primaryAddr and waits for its
// link to come up.
func startReplica(t *testing.T, primaryAddr string, args ...string) (*eddyProc, *redis.Client) {
	t.Helper()
	host, port, _ := net.SplitHostPort(primaryAddr)
	r := startEddy(t, append(args, "--replicaof", host+" "+port)...)
	rc := r.Client()
	waitLinkUp(t, rc)
	return r, rc
}

func waitLinkUp(t *testing.T, rc *redis.Client) {
	t.Helper()
	waitFor(t, 10*time.Second, "the replica's link", func() (bool, error) {
		s, err := rc.Info(context.Background(), "replication").Result()
		return strings.Contains(s, "master_link_status:up"), err
	})
}

// infoField returns one field of INFO section.
func infoField(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// dump returns every key of db 0 with its entries (streams), value
// (strings) and groups, for comparing two servers.
func dump(t *testing.T, c *redis.Client) map[string]any {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		typ := c.Type(ctx, k).Val()
		switch typ {
		case "stream":
			es, err := c.XRange(ctx, k, "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			groups, _ := c.XInfoGroups(ctx, k).Result()
			out[k] = []any{es, groups}
		default:
			out[k] = c.Get(ctx, k).Val()
		}
	}
	return out
}

// compareServers fails unless the two servers hold the same keys, entry
// by entry.
func compareServers(t *testing.T, p, r *redis.Client) {
	t.Helper()
	dp, dr := dump(t, p), dump(t, r)
	if len(dp) != len(dr) {
		t.Fatalf("primary has %d keys, replica %d", len(dp), len(dr))
	}
	for k, v := range dp {
		if !reflect.DeepEqual(v, dr[k]) {
			t.Fatalf("key %q differs:\nprimary %v\nreplica %v", k, v, dr[k])
		}
	}
}

// addEntries appends n entries "i <n>" to key.
func addEntries(t *testing.T, c *redis.Client, key string, n int) {
	t.Helper()
	for i := range n {
		if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: key, Values: []any{"i", i}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitCaughtUp waits until every replica acknowledged the primary's
// writes so far (WAIT).
func waitCaughtUp(t *testing.T, p *redis.Client, n int) {
	t.Helper()
	got, err := p.Wait(context.Background(), n, 10*time.Second).Result()
	if err != nil || got < int64(n) {
		t.Fatalf("WAIT %d = %d, %v", n, got, err)
	}
}

func TestReplFullSyncUnderLoad(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	for i := range 3000 {
		key := fmt.Sprintf("s%d", i%30)
		if err := pc.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"i", i}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := pc.XGroupCreate(ctx, "s1", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	pc.Set(ctx, "str", "v", 0)

	// Writes go on while the replica connects and loads the snapshot.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := pc.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("s%d", i%40), Values: []any{"w", i}}).Err(); err != nil {
				werr = err
				return
			}
			if i%10 == 0 {
				pc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s1", ">"}, Count: 2, Block: -1})
			}
		}
	}()
	_, rc := startReplica(t, p.Addr())
	// Writes also after the sync, through the link.
	waitFor(t, 5*time.Second, "writes after the sync", func() (bool, error) {
		n, err := pc.XLen(ctx, "s39").Result()
		if werr != nil {
			t.Fatalf("writer: %v", werr)
		}
		return n > 50, err
	})
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	waitCaughtUp(t, pc, 1)
	compareServers(t, pc, rc)
	if a, b := pc.DBSize(ctx).Val(), rc.DBSize(ctx).Val(); a != b {
		t.Fatalf("DBSIZE: primary %d, replica %d", a, b)
	}
	if v := infoField(t, pc, "stats", "sync_full"); v != "1" {
		t.Errorf("sync_full = %q, want 1", v)
	}
	role, err := rc.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 5 || role[0] != "slave" || role[3] != "connected" {
		t.Errorf("ROLE on the replica = %v, %v", role, err)
	}
}

func TestReplBlockedXReadWakes(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "1"}})
	r, rc := startReplica(t, p.Addr())
	waitCaughtUp(t, pc, 1)

	raw := r.Raw()
	if err := raw.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	// The reader is parked once the server counts it blocked.
	waitFor(t, 5*time.Second, "the blocked reader", func() (bool, error) {
		return infoField(t, rc, "clients", "blocked_clients") == "1", nil
	})
	id, err := pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"b", "2"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	got, err := raw.Read()
	lag := time.Since(sent)
	if err != nil || !strings.Contains(string(got), id) {
		t.Fatalf("XREAD on the replica = %v, want entry %s", got, id)
	}
	if lag > 100*time.Millisecond {
		t.Errorf("the replica's reader woke %v after the primary's XADD reply, want < 100ms", lag)
	}
}

func TestReplReadOnlyAndPromote(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []any{"a", "1"}})
	pc.XGroupCreate(ctx, "s", "g", "0")
	r, rc := startReplica(t, p.Addr())
	waitCaughtUp(t, pc, 1)

	raw := r.Raw()
	const readOnly = "-READONLY You can't write against a read only replica.\r\n"
	for _, cmd := range [][]string{
		{"SET", "k", "v"},
		{"XADD", "s", "*", "a", "1"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
		{"DEL", "s"},
	} {
		if got, err := raw.Do(cmd...); err != nil || string(got) != readOnly {
			t.Errorf("%v on a replica = %q, want %q", cmd, got, readOnly)
		}
	}
	if n, err := rc.XLen(ctx, "s").Result(); err != nil || n != 1 {
		t.Errorf("XLEN on the replica = %d, %v", n, err)
	}
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "2-1", Values: []any{"b", "2"}}).Err(); err != nil {
		t.Fatalf("XADD after REPLICAOF NO ONE: %v", err)
	}
	if n := rc.XLen(ctx, "s").Val(); n != 2 {
		t.Errorf("XLEN after the promoted write = %d, want 2", n)
	}
	if role := rc.Do(ctx, "ROLE").Val(); fmt.Sprint(role) == "" || fmt.Sprint(role.([]any)[0]) != "master" {
		t.Errorf("ROLE after promotion = %v", role)
	}
}

func TestReplKill9PartialResync(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t, "--repl-backlog-size", "10mb")
	pc := p.Client()
	addEntries(t, pc, "s", 200)
	r, rc := startReplica(t, p.Addr())
	waitCaughtUp(t, pc, 1)
	r.Kill9()
	for i := range 200 {
		pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"j", i}})
	}
	r.Restart()
	waitLinkUp(t, rc)
	waitCaughtUp(t, pc, 1)
	if v := infoField(t, pc, "stats", "sync_partial_ok"); v != "1" {
		t.Errorf("sync_partial_ok = %q, want 1 (sync_full %s)", v, infoField(t, pc, "stats", "sync_full"))
	}
	compareServers(t, pc, rc)
}

// proxy forwards TCP to target until cut; while cut it drops every
// connection, as a broken network would.
type proxy struct {
	ln     net.Listener
	target string
	down   func(dst io.Writer, src io.Reader) // copies target → client
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	return startProxyCopying(t, target, func(dst io.Writer, src io.Reader) { io.Copy(dst, src) })
}

// startProxyCopying is startProxy with down copying what the target sends.
func startProxyCopying(t *testing.T, target string, down func(dst io.Writer, src io.Reader)) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &proxy{ln: ln, target: target, down: down}
	t.Cleanup(func() { ln.Close(); px.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			px.mu.Lock()
			if px.cut {
				px.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				px.mu.Unlock()
				c.Close()
				continue
			}
			px.conns = append(px.conns, c, u)
			px.mu.Unlock()
			go func() { io.Copy(u, c); u.Close(); c.Close() }()
			go func() { px.down(c, u); u.Close(); c.Close() }()
		}
	}()
	return px
}

func (px *proxy) setCut(cut bool) {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.cut = cut
	if cut {
		for _, c := range px.conns {
			c.Close()
		}
		px.conns = nil
	}
}

func TestReplLinkCutAndRestored(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	px := startProxy(t, p.Addr())
	addEntries(t, pc, "s", 100)
	_, rc := startReplica(t, px.ln.Addr().String())
	waitCaughtUp(t, pc, 1)
	px.setCut(true)
	waitFor(t, 10*time.Second, "the link to go down", func() (bool, error) {
		return infoField(t, rc, "replication", "master_link_status") == "down", nil
	})
	for i := range 100 {
		pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"j", i}})
	}
	px.setCut(false)
	waitLinkUp(t, rc)
	waitCaughtUp(t, pc, 1)
	if v := infoField(t, pc, "stats", "sync_partial_ok"); v != "1" {
		t.Errorf("sync_partial_ok = %q, want 1", v)
	}
	compareServers(t, pc, rc)
}
