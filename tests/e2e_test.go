package tests

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestStreamRoundTrip drives the stream commands through go-redis, the way
// applications use Eddy.
func TestStreamRoundTrip(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	c := e.Client()
	ctx := testContext(t)

	for i, id := range []string{"1-1", "1-2", "2-0", "5-7"} {
		got, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"n", string(rune('a' + i)), "x", "y"}}).Result()
		if err != nil || got != id {
			t.Fatalf("XADD %s = %q, %v", id, got, err)
		}
	}
	if _, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "5-7", Values: []string{"f", "v"}}).Result(); err == nil ||
		!strings.Contains(err.Error(), "equal or smaller") {
		t.Errorf("XADD of an old ID: err = %v", err)
	}
	auto, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"auto", "1"}}).Result()
	if err != nil {
		t.Fatalf("XADD *: %v", err)
	}

	msgs, err := c.XRange(ctx, "s", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"1-1", "1-2", "2-0", "5-7", auto}
	if len(msgs) != len(wantIDs) {
		t.Fatalf("XRANGE returned %d entries, want %d: %v", len(msgs), len(wantIDs), msgs)
	}
	for i, m := range msgs {
		if m.ID != wantIDs[i] {
			t.Errorf("entry %d: ID %s, want %s", i, m.ID, wantIDs[i])
		}
	}
	if msgs[2].Values["n"] != "c" || msgs[2].Values["x"] != "y" {
		t.Errorf("entry 2-0 values = %v", msgs[2].Values)
	}

	rev, err := c.XRevRangeN(ctx, "s", "+", "-", 2).Result()
	if err != nil || len(rev) != 2 || rev[0].ID != auto || rev[1].ID != "5-7" {
		t.Errorf("XREVRANGE COUNT 2 = %v, %v", rev, err)
	}
	streams, err := c.XRead(ctx, &redis.XReadArgs{Streams: []string{"s", "2-0"}, Count: 1, Block: -1}).Result()
	if err != nil || len(streams) != 1 || streams[0].Stream != "s" || len(streams[0].Messages) != 1 ||
		streams[0].Messages[0].ID != "5-7" {
		t.Errorf("XREAD COUNT 1 STREAMS s 2-0 = %v, %v", streams, err)
	}
	if n, err := c.XDel(ctx, "s", "1-1", "9-9").Result(); err != nil || n != 1 {
		t.Errorf("XDEL = %d, %v", n, err)
	}
	if n, err := c.XTrimMaxLen(ctx, "s", 2).Result(); err != nil || n != 2 {
		t.Errorf("XTRIM MAXLEN 2 = %d, %v", n, err)
	}
	if n, err := c.XLen(ctx, "s").Result(); err != nil || n != 2 {
		t.Errorf("XLEN = %d, %v", n, err)
	}
	if typ, err := c.Type(ctx, "s").Result(); err != nil || typ != "stream" {
		t.Errorf("TYPE = %q, %v", typ, err)
	}
}

// TestBinarySafe stores keys, fields and values with NUL bytes, CRLF,
// empty strings and a 1 MB payload, and reads them back unchanged.
func TestBinarySafe(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	c := e.Client()
	ctx := testContext(t)

	big := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	key := "bin\x00key\r\n"
	values := []string{"\x00", "", "", "\r\n$5\r\n", "big", string(big), "\xff\xfe", "\x00\x00"}
	if _, err := c.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: "1-1", Values: values}).Result(); err != nil {
		t.Fatalf("XADD: %v", err)
	}
	// Raw bytes: go-redis's map would hide duplicate or reordered fields.
	raw := e.Raw()
	got, err := raw.Do("XRANGE", key, "-", "+")
	if err != nil {
		t.Fatal(err)
	}
	want := appendValue(nil, respValue{typ: '*', elems: []respValue{{typ: '*', elems: []respValue{
		{typ: '$', str: "1-1"}, {typ: '*', elems: bulks(values)},
	}}}})
	if !bytes.Equal(got, want) {
		t.Errorf("XRANGE of binary entry: got %d bytes, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}

	for _, v := range []string{"", "\x00", "a\x00b\r\nc", string(big)} {
		if err := c.Set(ctx, key, v, 0).Err(); err != nil {
			t.Fatalf("SET: %v", err)
		}
		if got, err := c.Get(ctx, key).Result(); err != nil || got != v {
			t.Errorf("GET after SET of %d bytes: %d bytes, %v", len(v), len(got), err)
		}
	}
	if n, err := c.Append(ctx, key, "\x00tail").Result(); err != nil || n != int64(len(big)+5) {
		t.Errorf("APPEND = %d, %v", n, err)
	}
	if got, err := c.Get(ctx, key).Result(); err != nil || got != string(big)+"\x00tail" {
		t.Errorf("GET after APPEND: %d bytes, %v", len(got), err)
	}
	if keys, err := c.Keys(ctx, "bin\x00*").Result(); err != nil || len(keys) != 1 || keys[0] != key {
		t.Errorf("KEYS with NUL = %q, %v", keys, err)
	}
}

func bulks(ss []string) []respValue {
	out := make([]respValue, len(ss))
	for i, s := range ss {
		out[i] = respValue{typ: '$', str: s}
	}
	return out
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestMalformedRESP checks that a client sending garbage gets an error and
// is disconnected, and that nobody else notices.
func TestMalformedRESP(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	ctx := testContext(t)
	other := e.Client()
	if err := other.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-0", Values: []string{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	for i, input := range []string{
		"*1\r\n$abc\r\n",
		"*1\r\n$536870913\r\n",
		"*abc\r\n",
		"*2\r\n$4\r\nECHO\r\n:1\r\n",
		"ECHO \"unbalanced\r\n",
		"*3\r\n$4\r\nXADD\r\n$1\r\ns\r\n$99999999999\r\n",
	} {
		c := e.Raw()
		// A valid command first: the error must not depend on it being the
		// connection's first request.
		if got, err := c.Do("PING"); err != nil || string(got) != "+PONG\r\n" {
			t.Fatalf("PING = %q, %v", got, err)
		}
		if err := c.SendRaw([]byte(input)); err != nil {
			t.Fatal(err)
		}
		got, err := c.Read()
		if err != nil || !strings.HasPrefix(string(got), "-ERR Protocol error") {
			t.Errorf("input %q: reply %q, %v; want -ERR Protocol error...", input, got, err)
		}
		if err := c.WaitClosed(10 * time.Second); err != nil {
			t.Errorf("input %q: %v", input, err)
		}
		id := []string{"2-0", "3-0", "4-0", "5-0", "6-0", "7-0"}[i]
		if err := other.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"f", "v"}}).Err(); err != nil {
			t.Errorf("after input %q, another client's XADD failed: %v", input, err)
		}
	}
	if n, err := other.XLen(ctx, "s").Result(); err != nil || n != 7 {
		t.Errorf("XLEN = %d, %v; want 7", n, err)
	}
}

// TestInfoWriteStalls reads Eddy's write-stop counters through go-redis,
// as an operator's exporter would: a fresh server has stopped no writes.
// With appendfsync always, concurrent XADDs share batches and syncs, and
// INFO persistence counts both: every write (an XADD, or the XADDs of
// the clients the event loop read in one turn) is one write of a group
// and one writer of a sync.
func TestInfoCommitsAndSyncs(t *testing.T) {
	t.Parallel()
	eddyOnly(t, "the eddy_ INFO fields are Eddy's")
	e := startEddy(t)
	c := e.Client()
	ctx := testContext(t)
	if err := c.ConfigSet(ctx, "appendfsync", "always").Err(); err != nil {
		t.Fatal(err)
	}
	fields := func() map[string]int64 {
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, f := range []string{"eddy_commit_groups", "eddy_commit_writes", "eddy_syncs", "eddy_sync_writers", "eddy_sync_usec"} {
			m := regexp.MustCompile(`(?m)^` + f + `:(\d+)\r?$`).FindStringSubmatch(info)
			if m == nil {
				t.Fatalf("INFO persistence lacks %s: %q", f, info)
			}
			got[f], _ = strconv.ParseInt(m[1], 10, 64)
		}
		return got
	}
	before := fields()
	const writers, each = 20, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	after := fields()
	d := func(f string) int64 { return after[f] - before[f] }
	// The event loop runs the XADDs that arrive in one turn as one write.
	if w := d("eddy_commit_writes"); w < 1 || w > writers*each || d("eddy_sync_writers") != w {
		t.Errorf("%d XADDs: commit writes +%d, sync writers +%d, want both the same, 1 to %d", writers*each, w, d("eddy_sync_writers"), writers*each)
	}
	if n, err := c.XLen(ctx, "s").Result(); err != nil || n != writers*each {
		t.Errorf("XLEN s = %d, %v; want %d", n, err, writers*each)
	}
	if g := d("eddy_commit_groups"); g < 1 || g > writers*each {
		t.Errorf("%d XADDs in %d groups", writers*each, g)
	}
	if n := d("eddy_syncs"); n < 1 || n > d("eddy_commit_groups") {
		t.Errorf("%d syncs for %d groups", n, d("eddy_commit_groups"))
	}
}

func TestInfoWriteStalls(t *testing.T) {
	t.Parallel()
	eddyOnly(t, "the eddy_ INFO fields are Eddy's")
	e := startEddy(t)
	c := e.Client()
	ctx := testContext(t)
	if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx, "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"eddy_write_stalls", "eddy_write_stall_ms", "eddy_write_stalled"} {
		m := regexp.MustCompile(`(?m)^` + f + `:(\d+)\r?$`).FindStringSubmatch(info)
		if m == nil || m[1] != "0" {
			t.Errorf("INFO persistence: %s = %v, want 0 in %q", f, m, info)
		}
	}
}
