package tests

import (
	"context"
	"reflect"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A pipeline's XADDs share one group commit, which packs them several to
// a record (stream/records.go). The records reach a replica as they are,
// and both servers must read them back alike, after deletions and trims
// that cut into records, and again after each restarts from its store.
func TestReplPackedEntries(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	r, rc := startReplica(t, p.Addr())
	pipe := pc.Pipeline()
	for i := range 1000 {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "*", Values: []any{"i", i, "pad", "some value"}})
	}
	added, err := pipe.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range added {
		ids = append(ids, c.(*redis.StringCmd).Val())
	}
	// Deletions inside records, and trims that end inside one.
	if err := pc.XDel(ctx, "s", ids[3], ids[17], ids[500], ids[999]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := pc.XTrimMaxLen(ctx, "s", 990).Err(); err != nil {
		t.Fatal(err)
	}
	if err := pc.XTrimMinID(ctx, "s", ids[21]).Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, pc, 1)
	reads := func(c *redis.Client) []any {
		t.Helper()
		var out []any
		for _, q := range [][2]string{{"-", "+"}, {ids[30], ids[40]}, {ids[499], ids[501]}} {
			es, err := c.XRange(ctx, "s", q[0], q[1]).Result()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, es)
		}
		rev, err := c.XRevRangeN(ctx, "s", "+", ids[600], 7).Result()
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.XLen(ctx, "s").Result()
		if err != nil {
			t.Fatal(err)
		}
		return append(out, rev, n)
	}
	want := reads(pc)
	idsOf := func(es []redis.XMessage) (out []string) {
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	var live []string
	for i, id := range ids[21:] {
		if i+21 != 500 && i+21 != 999 {
			live = append(live, id)
		}
	}
	for i, w := range [][]string{live, ids[30:41], {ids[499], ids[501]}, {ids[998], ids[997], ids[996], ids[995], ids[994], ids[993], ids[992]}} {
		if got := idsOf(want[i].([]redis.XMessage)); !reflect.DeepEqual(got, w) {
			t.Fatalf("read %d on the primary: %d entries %v, want %d", i, len(got), got, len(w))
		}
	}
	if n := want[len(want)-1].(int64); n != 977 {
		t.Fatalf("XLEN %d after the deletions and trims, want 977", n)
	}
	if got := reads(rc); !reflect.DeepEqual(got, want) {
		t.Fatalf("the replica reads differently:\nprimary %v\nreplica %v", want, got)
	}
	p.Restart()
	if got := reads(p.Client()); !reflect.DeepEqual(got, want) {
		t.Fatalf("the primary reads differently after a restart:\nbefore %v\nafter  %v", want, got)
	}
	r.Restart()
	if got := reads(r.Client()); !reflect.DeepEqual(got, want) {
		t.Fatalf("the replica reads differently after a restart:\nbefore %v\nafter  %v", want, got)
	}
}
