package tests

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Chained replicas, WAIT, and ROLE/INFO replication on a primary that has
// a replica, the last compared in shape with two real redis-servers.

// TestReplChained: primary → replica → sub-replica. The sub-replica
// follows the replica's log, which carries the primary's batches at the
// primary's offsets.
func TestReplChained(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	addEntries(t, pc, "s", 50)
	r, rc := startReplica(t, p.Addr())
	waitCaughtUp(t, pc, 1)
	sub, sc := startReplica(t, r.Addr())
	if n := sc.XLen(ctx, "s").Val(); n != 50 {
		t.Fatalf("XLEN s on the sub-replica after its sync = %d, want 50", n)
	}

	id, err := pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"i", "after"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the entry on the sub-replica", func() (bool, error) {
		es, err := sc.XRange(ctx, "s", id, id).Result()
		return len(es) == 1, err
	})

	raw := sub.Raw()
	if err := raw.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the blocked reader", func() (bool, error) {
		return infoField(t, sc, "clients", "blocked_clients") == "1", nil
	})
	id, err = pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"b", "2"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	got, err := raw.ReadTimeout(5 * time.Second)
	if err != nil || !strings.Contains(string(got), id) {
		t.Fatalf("XREAD on the sub-replica = %q, %v; want entry %s", got, err, id)
	}

	// Both ends of the middle link agree on the offsets.
	waitFor(t, 5*time.Second, "the sub-replica's offset", func() (bool, error) {
		return infoField(t, sc, "replication", "slave_repl_offset") == infoField(t, pc, "replication", "master_repl_offset"), nil
	})
	if v := infoField(t, rc, "replication", "connected_slaves"); v != "1" {
		t.Errorf("connected_slaves on the middle replica = %q, want 1", v)
	}
	if a, b := infoField(t, pc, "replication", "master_replid"), infoField(t, sc, "replication", "master_replid"); a != b {
		t.Errorf("master_replid: primary %s, sub-replica %s", a, b)
	}
	compareServers(t, pc, sc)
}

// TestReplWait: WAIT counts the replicas that acknowledged the client's
// writes, and otherwise returns what it has at the timeout.
func TestReplWait(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	wait := func(n, ms int) (int64, time.Duration) {
		t.Helper()
		start := time.Now()
		got, err := pc.Do(ctx, "WAIT", n, ms).Int64()
		if err != nil {
			t.Fatalf("WAIT %d %d: %v", n, ms, err)
		}
		return got, time.Since(start)
	}
	pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "1"}})
	if got, took := wait(1, 200); got != 0 || took < 200*time.Millisecond {
		t.Errorf("WAIT 1 200 without replicas = %d after %v, want 0 after the timeout", got, took)
	}
	if got, _ := wait(0, 0); got != 0 {
		t.Errorf("WAIT 0 0 without replicas = %d, want 0", got)
	}

	startReplica(t, p.Addr())
	pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "2"}})
	for _, tc := range []struct {
		n, ms int
		want  int64
		timed bool // must have waited out its timeout
	}{
		{1, 5000, 1, false},
		{2, 300, 1, true},
		{0, 0, 1, false},
	} {
		got, took := wait(tc.n, tc.ms)
		if got != tc.want {
			t.Errorf("WAIT %d %d with one replica = %d, want %d", tc.n, tc.ms, got, tc.want)
		}
		if tc.timed && took < time.Duration(tc.ms)*time.Millisecond {
			t.Errorf("WAIT %d %d returned after %v, before its timeout", tc.n, tc.ms, took)
		}
		if !tc.timed && took > 2*time.Second {
			t.Errorf("WAIT %d %d took %v", tc.n, tc.ms, took)
		}
	}
	// Sent with the write it waits for, WAIT blocks before the replica
	// can have acknowledged it, and the acknowledgement wakes it.
	start := time.Now()
	cmds, err := pc.Pipelined(ctx, func(pp redis.Pipeliner) error {
		pp.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "3"}})
		pp.Do(ctx, "WAIT", 1, 10000)
		return nil
	})
	if err != nil {
		t.Fatalf("XADD + WAIT 1 10000: %v", err)
	}
	if got, err := cmds[1].(*redis.Cmd).Int64(); err != nil || got != 1 {
		t.Errorf("WAIT 1 10000 behind an XADD = %d, %v; want 1", got, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("WAIT 1 10000 behind an XADD took %v: not woken by the acknowledgement", took)
	}
}

// replPair is a primary and one replica, connected and caught up.
type replPair struct {
	pc, rc      *redis.Client
	replicaPort int
}

func eddyPair(t *testing.T) replPair {
	p := startEddy(t)
	pc := p.Client()
	r, rc := startReplica(t, p.Addr())
	_, port, _ := net.SplitHostPort(r.Addr())
	n, _ := strconv.Atoi(port)
	return replPair{pc, rc, n}
}

func redisPair(t *testing.T) replPair {
	p, r := startRedis(t), startRedis(t)
	pc, rc := p.Client(), r.Client()
	host, port, _ := net.SplitHostPort(p.Addr())
	if err := rc.Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, rc)
	_, rport, _ := net.SplitHostPort(r.Addr())
	n, _ := strconv.Atoi(rport)
	return replPair{pc, rc, n}
}

// infoLines returns INFO section's fields in order.
func infoLines(t *testing.T, c *redis.Client, section string) [][2]string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// shape replaces a reply's values by their types, keeping arrays.
func shape(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = shape(x)
		}
		return out
	default:
		return fmt.Sprintf("%T", v)
	}
}

func TestReplRoleAndInfoOnPrimary(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	type observed struct {
		keys        []string
		role        any
		replicaErrs []string // replies of writes sent to the replica
		replicaRole any
	}
	observe := func(t *testing.T, rp replPair) observed {
		rp.pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "1"}})
		waitCaughtUp(t, rp.pc, 1)
		lines := infoLines(t, rp.pc, "replication")
		var keys []string
		fields := map[string]string{}
		for _, kv := range lines {
			keys = append(keys, kv[0])
			fields[kv[0]] = kv[1]
		}
		if fields["role"] != "master" || fields["connected_slaves"] != "1" {
			t.Errorf("role:%s connected_slaves:%s, want master and 1", fields["role"], fields["connected_slaves"])
		}
		re := regexp.MustCompile(`^ip=127\.0\.0\.1,port=` + strconv.Itoa(rp.replicaPort) + `,state=online,offset=(\d+),lag=(\d+)$`)
		m := re.FindStringSubmatch(fields["slave0"])
		if m == nil {
			t.Errorf("slave0:%s, want %s", fields["slave0"], re)
		}
		role, err := rp.pc.Do(ctx, "ROLE").Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(role) != 3 || role[0] != "master" {
			t.Fatalf("ROLE = %v", role)
		}
		reps, _ := role[2].([]any)
		if len(reps) != 1 {
			t.Fatalf("ROLE lists %v, want one replica", role[2])
		}
		rep, _ := reps[0].([]any)
		if len(rep) != 3 || rep[0] != "127.0.0.1" || rep[1] != strconv.Itoa(rp.replicaPort) {
			t.Errorf("ROLE's replica = %v, want [127.0.0.1 %d offset]", rep, rp.replicaPort)
		}
		var errs []string
		for _, cmd := range [][]any{
			{"SET", "k", "v"},
			{"XADD", "s", "*", "f", "v"},
			{"XGROUP", "CREATE", "s", "g", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
			{"DEL", "s"},
		} {
			errs = append(errs, fmt.Sprint(rp.rc.Do(ctx, cmd...).Err()))
		}
		replicaRole, err := rp.rc.Do(ctx, "ROLE").Slice()
		if err != nil {
			t.Fatal(err)
		}
		return observed{keys, shape(role), errs, shape(replicaRole)}
	}
	var want observed
	t.Run("redis", func(t *testing.T) { want = observe(t, redisPair(t)) })
	t.Run("eddy", func(t *testing.T) {
		rp := eddyPair(t)
		got := observe(t, rp)
		if want.keys != nil && !slices.Equal(got.keys, want.keys) {
			t.Errorf("INFO replication fields:\neddy  %v\nredis %v", got.keys, want.keys)
		}
		if want.role != nil && fmt.Sprint(got.role) != fmt.Sprint(want.role) {
			t.Errorf("ROLE shape: eddy %v, redis %v", got.role, want.role)
		}
		if want.replicaErrs != nil && !slices.Equal(got.replicaErrs, want.replicaErrs) {
			t.Errorf("writes on the replica:\neddy  %q\nredis %q", got.replicaErrs, want.replicaErrs)
		}
		if want.replicaRole != nil && fmt.Sprint(got.replicaRole) != fmt.Sprint(want.replicaRole) {
			t.Errorf("replica's ROLE shape: eddy %v, redis %v", got.replicaRole, want.replicaRole)
		}
		// Eddy sends no PINGs down the link, so once WAIT returned the
		// replica's acknowledged offset is exactly the primary's.
		off := infoField(t, rp.pc, "replication", "master_repl_offset")
		if s := infoField(t, rp.pc, "replication", "slave0"); !strings.Contains(s, ",offset="+off+",") {
			t.Errorf("slave0:%s, want offset=%s", s, off)
		}
		role := rp.pc.Do(ctx, "ROLE").Val().([]any)
		if fmt.Sprint(role[1]) != off || fmt.Sprint(role[2].([]any)[0].([]any)[2]) != off {
			t.Errorf("ROLE = %v, want offsets %s", role, off)
		}
	})
}

// TestReplPipelinedWritesRefused: writes pipelined to a replica (which a
// primary would run as one group) are refused one by one, as Redis
// refuses them, and the replica's data stays the primary's.
func TestReplPipelinedWritesRefused(t *testing.T) {
	skipAgainstRedis(t)
	var want []string
	t.Run("redis", func(t *testing.T) {
		// No wait for more replicas before a diskless full sync.
		want = pipelineOnReplica(t, func() replNode { return startRedis(t, "--repl-diskless-sync-delay", "0") })
	})
	t.Run("eddy", func(t *testing.T) {
		got := pipelineOnReplica(t, func() replNode { return startEddy(t) })
		for i, e := range got {
			if !strings.HasPrefix(e, "READONLY") {
				t.Errorf("pipelined command %d on a replica: %q, want READONLY", i, e)
			}
		}
		if want != nil && !slices.Equal(got, want) {
			t.Errorf("eddy and redis differ:\n eddy  %q\n redis %q", got, want)
		}
	})
}

// pipelineOnReplica sends writes in one pipeline to a replica of a
// primary (both from start) and returns each command's error text, after
// checking that the replica still holds the primary's data.
func pipelineOnReplica(t *testing.T, start func() replNode) []string {
	ctx := context.Background()
	p, r := start(), start()
	pc, rc := p.Client(), r.Client()
	if err := pc.Set(ctx, "a", "primary", 0).Err(); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, rc, p)
	waitLinkUp(t, rc)
	waitCaughtUp(t, pc, 1)
	pipe := rc.Pipeline()
	pipe.Set(ctx, "a", "replica", 0)
	pipe.Set(ctx, "b", "replica", 0)
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"f", "v"}})
	cmds, _ := pipe.Exec(ctx)
	var errs []string
	for _, c := range cmds {
		e := "<nil>"
		if err := c.Err(); err != nil {
			e = err.Error()
		}
		errs = append(errs, e)
	}
	compareServers(t, pc, rc)
	return errs
}

// TestReplRefusesOtherProtocol: the link ships store records as they are,
// so its protocol version names the store format (replication/frame.go);
// a replica speaking version 1 (store format 2) is refused, version 2 is
// agreed.
func TestReplRefusesOtherProtocol(t *testing.T) {
	skipAgainstRedis(t)
	p := startEddy(t)
	c := p.Raw()
	defer c.Close()
	for _, tt := range []struct {
		version, want string
	}{
		{"1", "-ERR unsupported eddy replication protocol 1 (this server speaks 3)\r\n"},
		{"2", "-ERR unsupported eddy replication protocol 2 (this server speaks 3)\r\n"},
		{"3", "+OK\r\n"},
	} {
		got, err := c.Do("REPLCONF", "eddy-proto", tt.version, "batch", "ack", "heartbeat")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("REPLCONF eddy-proto %s = %q, want %q", tt.version, got, tt.want)
		}
	}
}
