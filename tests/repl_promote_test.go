package tests

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Promotion keeps the old history (Redis 7's master_replid2): after the
// primary dies and a replica is promoted, the other replicas of the old
// primary, and theirs, resync partially from it. The same scenario runs
// on real redis-servers and on Eddy, and what INFO shows is compared
// where it is deterministic.

// replNode is a server of the scenario, Eddy or redis-server.
type replNode interface {
	Client() *redis.Client
	Addr() string
	Kill9()
}

// promoteObs is what the scenario observes: relations between INFO
// fields, which do not depend on the random ids or on the offsets'
// absolute values.
type promoteObs struct {
	FreshReplid2Zero, FreshSecondMinusOne bool // on a primary that never changed history
	NewReplid, Replid2IsOld               bool // on the promoted node
	SecondIsOffsetPlusOne                 bool
	AFull, APartialOK                     string // INFO stats of the promoted node after B joined
	BFull, BPartialOK                     string // of B, whose own replica C reconnected
	BReplidIsA, BReplid2IsOld, BSecondIsA bool
	CReplidIsA, CReplid2IsOld             bool
}

func replicaOf(t *testing.T, c *redis.Client, primary replNode) {
	t.Helper()
	host, port, _ := net.SplitHostPort(primary.Addr())
	if err := c.Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
}

// waitOffset waits until the replica's data reaches the primary's offset.
func waitOffset(t *testing.T, primary, replica *redis.Client) {
	t.Helper()
	waitFor(t, 20*time.Second, "the replica to reach the primary's offset", func() (bool, error) {
		return infoField(t, replica, "replication", "slave_repl_offset") == infoField(t, primary, "replication", "master_repl_offset"), nil
	})
}

func runPromotion(t *testing.T, start func() replNode) promoteObs {
	ctx := context.Background()
	p, a, b, c := start(), start(), start(), start()
	pc, ac, bc, cc := p.Client(), a.Client(), b.Client(), c.Client()
	var o promoteObs
	o.FreshReplid2Zero = infoField(t, pc, "replication", "master_replid2") == strings.Repeat("0", 40)
	o.FreshSecondMinusOne = infoField(t, pc, "replication", "second_repl_offset") == "-1"

	replicaOf(t, ac, p)
	replicaOf(t, bc, p)
	replicaOf(t, cc, b)
	for _, rc := range []*redis.Client{ac, bc, cc} {
		waitLinkUp(t, rc)
	}
	for i := range 30 {
		if err := pc.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("s%d", i%3), Values: []any{"i", i}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	pc.Set(ctx, "str", "v", 0)
	pc.XGroupCreate(ctx, "s0", "g", "0")
	pc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s0", ">"}, Count: 3})
	waitOffset(t, pc, ac)
	waitOffset(t, pc, bc)
	waitOffset(t, bc, cc)
	old := infoField(t, pc, "replication", "master_replid")
	p.Kill9()

	if err := ac.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	aID := infoField(t, ac, "replication", "master_replid")
	aSecond := infoField(t, ac, "replication", "second_repl_offset")
	aOff, _ := strconv.ParseInt(infoField(t, ac, "replication", "master_repl_offset"), 10, 64)
	o.NewReplid = aID != old
	o.Replid2IsOld = infoField(t, ac, "replication", "master_replid2") == old
	o.SecondIsOffsetPlusOne = aSecond == strconv.FormatInt(aOff+1, 10)

	replicaOf(t, bc, a)
	waitLinkUp(t, bc)
	// C's link to B drops when B takes A's id; it comes back under it.
	waitFor(t, 20*time.Second, "the sub-replica to follow the new id", func() (bool, error) {
		return infoField(t, cc, "replication", "master_replid") == aID &&
			infoField(t, cc, "replication", "master_link_status") == "up", nil
	})
	o.AFull, o.APartialOK = infoField(t, ac, "stats", "sync_full"), infoField(t, ac, "stats", "sync_partial_ok")
	o.BFull, o.BPartialOK = infoField(t, bc, "stats", "sync_full"), infoField(t, bc, "stats", "sync_partial_ok")
	o.BReplidIsA = infoField(t, bc, "replication", "master_replid") == aID
	o.BReplid2IsOld = infoField(t, bc, "replication", "master_replid2") == old
	o.BSecondIsA = infoField(t, bc, "replication", "second_repl_offset") == aSecond
	o.CReplidIsA = infoField(t, cc, "replication", "master_replid") == aID
	o.CReplid2IsOld = infoField(t, cc, "replication", "master_replid2") == old

	// What the promoted node takes now reaches both, key by key.
	for i := range 20 {
		if err := ac.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("s%d", i%4), Values: []any{"after", i}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	ac.Set(ctx, "str2", "w", 0)
	ac.XAck(ctx, "s0", "g", infoFirstPending(t, ac))
	waitOffset(t, ac, bc)
	waitOffset(t, ac, cc)
	compareServers(t, ac, bc)
	compareServers(t, ac, cc)
	return o
}

// infoFirstPending returns the first pending entry of s0's group g.
func infoFirstPending(t *testing.T, c *redis.Client) string {
	t.Helper()
	ps, err := c.XPendingExt(context.Background(), &redis.XPendingExtArgs{Stream: "s0", Group: "g", Start: "-", End: "+", Count: 1}).Result()
	if err != nil || len(ps) == 0 {
		t.Fatalf("XPENDING s0 g = %v, %v", ps, err)
	}
	return ps[0].ID
}

func TestReplPromotionKeepsHistory(t *testing.T) {
	skipAgainstRedis(t)
	var want *promoteObs
	t.Run("redis", func(t *testing.T) {
		o := runPromotion(t, func() replNode { return startRedis(t) })
		want = &o
	})
	t.Run("eddy", func(t *testing.T) {
		got := runPromotion(t, func() replNode { return startEddy(t) })
		// What Redis shows, and independently of it: the other replica
		// and its own replica resynced partially, nobody fully.
		exact := promoteObs{
			FreshReplid2Zero: true, FreshSecondMinusOne: true,
			NewReplid: true, Replid2IsOld: true, SecondIsOffsetPlusOne: true,
			AFull: "0", APartialOK: "1", BFull: "1", BPartialOK: "1",
			BReplidIsA: true, BReplid2IsOld: true, BSecondIsA: true,
			CReplidIsA: true, CReplid2IsOld: true,
		}
		if got != exact {
			t.Errorf("eddy:\n got  %+v\n want %+v", got, exact)
		}
		if want != nil && got != *want {
			t.Errorf("eddy and redis differ:\n eddy  %+v\n redis %+v", got, *want)
		}
	})
}
