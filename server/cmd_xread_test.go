package server

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// Expected error texts were read from redis-server 7.0.15 (see checkRedis).
// Stream s has an entry, so no case blocks there; other keys are absent,
// so the first bad ID is what Redis reports.
func TestParseXRead(t *testing.T) {
	id := func(ms, seq uint64) xreadID { return xreadID{id: stream.ID{Ms: ms, Seq: seq}} }
	dollar := xreadID{dollar: true}
	tests := []struct {
		line string
		want xreadArgs // keys filled from wantKeys
		keys string
		err  string
	}{
		{line: "xread streams s 0", keys: "s", want: xreadArgs{ids: []xreadID{id(0, 0)}}},
		{line: "xread streams s t 1-2 $", keys: "s t", want: xreadArgs{ids: []xreadID{id(1, 2), dollar}}},
		{line: "xread streams s 5", keys: "s", want: xreadArgs{ids: []xreadID{id(5, 0)}}},
		{line: "xread streams s s 0 0", keys: "s s", want: xreadArgs{ids: []xreadID{id(0, 0), id(0, 0)}}},
		{line: "xread COUNT 3 streams s 0", keys: "s", want: xreadArgs{count: 3, ids: []xreadID{id(0, 0)}}},
		{line: "xread count 0 streams s 0", keys: "s", want: xreadArgs{ids: []xreadID{id(0, 0)}}},
		{line: "xread count -5 streams s 0", keys: "s", want: xreadArgs{ids: []xreadID{id(0, 0)}}},
		{line: "xread count 1 count 2 streams s 0", keys: "s", want: xreadArgs{count: 2, ids: []xreadID{id(0, 0)}}},
		{line: "xread block 0 streams s 0", keys: "s", want: xreadArgs{block: true, ids: []xreadID{id(0, 0)}}},
		{line: "xread block 1 block 2 streams s 0", keys: "s", want: xreadArgs{block: true, timeout: 2, ids: []xreadID{id(0, 0)}}},
		{line: "xread block 9223372036854775807 count 1 streams s 0", keys: "s", want: xreadArgs{block: true, timeout: math.MaxInt64, count: 1, ids: []xreadID{id(0, 0)}}},
		{line: "xread streams streams 0", keys: "streams", want: xreadArgs{ids: []xreadID{id(0, 0)}}},
		// Everything after STREAMS is keys and IDs, options included.
		{line: "xread streams count 1 s 0", keys: "count 1", err: errInvalidStreamID},
		{line: "xread streams s 18446744073709551615-18446744073709551615", keys: "s", want: xreadArgs{ids: []xreadID{id(math.MaxUint64, math.MaxUint64)}}},

		{line: "xread streams s t 0", err: errXReadUnbalanced},
		{line: "xread count 1 streams s", err: errXReadUnbalanced},
		{line: "xread foo streams s 0", err: errSyntax},
		{line: "xread count 1 block 1 streams", err: errSyntax},
		{line: "xread count 1 block 1 count", err: errSyntax},
		{line: "xread count abc streams s 0", err: errValueNotInteger},
		{line: "xread count streams s 0", err: errValueNotInteger},
		{line: "xread count 01 streams s 0", err: errValueNotInteger},
		{line: "xread block abc streams s 0", err: errTimeoutNotInteger},
		{line: "xread block 1.5 streams s 0", err: errTimeoutNotInteger},
		{line: "xread block +1 streams s 0", err: errTimeoutNotInteger},
		{line: "xread block -1 streams s 0", err: errTimeoutNegative},
		{line: "xread block -1 count x streams s 0", err: errTimeoutNegative},
		{line: "xread count x block -1 streams s 0", err: errValueNotInteger},
		{line: "xread group g c streams s 0", err: errXReadGroupOption},
		{line: "xread noack streams s 0", err: errXReadNoAck},
		{line: "xread streams s 0 group", err: errXReadUnbalanced},
		{line: "xread group g streams s", err: errXReadGroupOption},
		{line: "xread count 1 group g", err: errSyntax},
		{line: "xread streams s +", keys: "s", err: errInvalidStreamID},
		{line: "xread streams s -", keys: "s", err: errInvalidStreamID},
		{line: "xread streams s (0", keys: "s", err: errInvalidStreamID},
		{line: "xread streams s 1-*", keys: "s", err: errInvalidStreamID},
		{line: "xread streams s >", keys: "s", err: errXReadGroupID},
		{line: "xread streams s t 0 abc", keys: "s t", err: errInvalidStreamID},
		{line: "xread streams s t > abc", keys: "s t", err: errXReadGroupID},
		{line: "xread streams s t abc >", keys: "s t", err: errInvalidStreamID},
	}
	for _, tt := range tests {
		checkRedis(t, []string{"xadd s 1-1 f v"}, tt.line, tt.err)
		a, errText := parseXRead(argv(t, tt.line))
		if errText == "" {
			// The first bad ID is reported after its key's type check.
			for _, id := range a.ids {
				if id.errText != "" {
					errText = id.errText
					break
				}
			}
		}
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err != "" {
			continue
		}
		want := tt.want
		want.keys = argv(t, tt.keys)
		if !reflect.DeepEqual(a, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.line, a, want)
		}
	}
}

func TestBlockTimeout(t *testing.T) {
	tests := []struct {
		ms   int64
		want time.Duration
	}{
		{0, 0},
		{1, time.Millisecond},
		{1500, 1500 * time.Millisecond},
		{math.MaxInt64 / int64(time.Millisecond), time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond},
		{math.MaxInt64/int64(time.Millisecond) + 1, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := blockTimeout(tt.ms); got != tt.want {
			t.Errorf("blockTimeout(%d) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

// TestXReadReplies compares whole replies with what redis-server 7.0.15
// sent for the same lines: an array of [key, entries] in RESP2, a map in
// RESP3.
func TestXReadReplies(t *testing.T) {
	h := newStreamHarness(t, 2)
	h.expect("xread streams s 0", "*-1\r\n")
	h.expect("xadd s 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xadd s 2-1 b 2", "$3\r\n2-1\r\n")
	h.expect("xadd t 5-5 c 3", "$3\r\n5-5\r\n")
	h.expect("xread streams s t 0 0", "*2\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread streams s t 0 $", "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
	h.expect("xread streams s $", "*-1\r\n")
	h.expect("xread count 1 streams s t 0 0", "*2\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread count -1 streams s t 1-1 0", "*2\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread streams nokey s $ 1", "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
	h.expect("xread block 100 streams s t 2 0", "*2\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread streams s s 0 1-1", "*2\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
	h.expect("xread streams s t 0 >", "-ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.\r\n")
}

func TestXReadRepliesRESP3(t *testing.T) {
	h := newStreamHarness(t, 3)
	h.expect("xread streams s 0", "_\r\n")
	h.expect("xadd s 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xadd s 2-1 b 2", "$3\r\n2-1\r\n")
	h.expect("xadd t 5-5 c 3", "$3\r\n5-5\r\n")
	h.expect("xread streams s t 0 0", "%2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread streams s t 0 $", "%1\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
	h.expect("xread streams s $", "_\r\n")
	h.expect("xread count 1 streams s t 0 0", "%2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread count -1 streams s t 1-1 0", "%2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread streams nokey s $ 1", "%1\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
	h.expect("xread block 100 streams s t 2 0", "%2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n5-5\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xread streams s s 0 1-1", "%2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n")
	h.expect("xread streams s t 0 >", "-ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.\r\n")
}

// retry runs a blocked command's retry in a fresh View, as the dispatcher
// does after a wake-up that reported the keys woken, in commit order.
func (h *streamHarness) retry(b *blockRequest, woken ...string) (string, bool) {
	h.t.Helper()
	ctx := &cmdContext{w: &replyWriter{proto: h.proto}}
	for _, k := range woken {
		ctx.woken = append(ctx.woken, []byte(k))
	}
	var done bool
	h.exec(ctx, flagReadOnly, func(ctx *cmdContext) { done = b.retry(ctx) })
	return string(ctx.w.buf), done
}

// The blocked replies below are what redis-server 7.0.15 sent to a
// blocked XREAD client in the same situations.
func TestXReadBlock(t *testing.T) {
	for _, proto := range []int{2, 3} {
		h := newStreamHarness(t, proto)
		h.redis = nil // blocking is not replayed against Redis here
		h.run("xadd s 1-1 f v", false)

		ctx := h.run("xread block 1500 streams nokey s $ $", false)
		if len(ctx.w.buf) != 0 || ctx.block == nil {
			t.Fatalf("RESP%d: did not block: %q", proto, ctx.w.buf)
		}
		b := ctx.block
		if b.timeout != 1500*time.Millisecond || len(b.keys) != 2 ||
			string(b.keys[0]) != "nokey" || string(b.keys[1]) != "s" {
			t.Errorf("RESP%d: block request %+v", proto, b)
		}
		if rep, done := h.retry(b, "nokey", "s"); done || rep != "" {
			t.Errorf("RESP%d: retry with nothing new: %q, %v", proto, rep, done)
		}
		// "$" was resolved when the command ran: 1-1 for s, 0-0 for the
		// missing key, so both new entries below are after it.
		h.run("xadd s 2-1 f v", false)
		h.run("xadd nokey 0-5 g w", false)
		want := "*1\r\n*2\r\n$5\r\nnokey\r\n*1\r\n*2\r\n$3\r\n0-5\r\n*2\r\n$1\r\ng\r\n$1\r\nw\r\n"
		if proto == 3 {
			want = "%1\r\n$5\r\nnokey\r\n*1\r\n*2\r\n$3\r\n0-5\r\n*2\r\n$1\r\ng\r\n$1\r\nw\r\n"
		}
		if rep, done := h.retry(b, "nokey"); !done || rep != want {
			t.Errorf("RESP%d: retry:\n got %q, %v\nwant %q", proto, rep, done, want)
		}
		// Both appended: the key committed first is served, whatever the
		// order of the command's keys.
		want = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
		if proto == 3 {
			want = "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
		}
		if rep, done := h.retry(b, "s", "nokey"); !done || rep != want {
			t.Errorf("RESP%d: retry in commit order:\n got %q, %v\nwant %q", proto, rep, done, want)
		}
		// A key that was not reported stays unread (XSETID wakes nobody).
		if rep, done := h.retry(b); done || rep != "" {
			t.Errorf("RESP%d: retry with no key woken: %q, %v", proto, rep, done)
		}

		// Entries appended then deleted before the reader ran: Redis still
		// answers, with that stream's list empty.
		ctx = h.run("xread count 5 block 0 streams s $", false)
		if ctx.block == nil || ctx.block.timeout != 0 {
			t.Fatalf("RESP%d: block 0: %+v", proto, ctx.block)
		}
		h.run("xadd s 3-1 f v", false)
		h.run("xdel s 3-1", false)
		want = "*1\r\n*2\r\n$1\r\ns\r\n*0\r\n"
		if proto == 3 {
			want = "%1\r\n$1\r\ns\r\n*0\r\n"
		}
		if rep, done := h.retry(ctx.block, "s"); !done || rep != want {
			t.Errorf("RESP%d: retry after delete:\n got %q, %v\nwant %q", proto, rep, done, want)
		}

		var w replyWriter
		w.proto = proto
		ctx.block.onTimeout(&w)
		want = "*-1\r\n"
		if proto == 3 {
			want = "_\r\n"
		}
		if string(w.buf) != want {
			t.Errorf("RESP%d: timeout reply %q, want %q", proto, w.buf, want)
		}
	}
}

// Inside MULTI (EXEC) Redis never blocks: nothing to read is a nil reply.
func TestXReadBlockInMulti(t *testing.T) {
	for _, proto := range []int{2, 3} {
		h := newStreamHarness(t, proto)
		ctx := h.run("xread block 0 streams s $", true)
		want := "*-1\r\n"
		if proto == 3 {
			want = "_\r\n"
		}
		if ctx.block != nil || string(ctx.w.buf) != want {
			t.Errorf("RESP%d: got %q, block %v; want %q", proto, ctx.w.buf, ctx.block != nil, want)
		}
	}
}

// TestBlockRegistryWokenOrder checks that a waiting client learns the keys
// appended to in commit order, once each, and only its own keys.
func TestBlockRegistryWokenOrder(t *testing.T) {
	var r blockRegistry
	r.init()
	c := &client{}
	r.add(c, 0, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	r.signal([]stream.Change{
		{Kind: stream.Appended, DB: 0, Key: []byte("c")},
		{Kind: stream.Appended, DB: 1, Key: []byte("a")}, // another database
		{Kind: stream.Appended, DB: 0, Key: []byte("x")}, // not waited on
		{Kind: stream.Appended, DB: 0, Key: []byte("a")},
		{Kind: stream.Appended, DB: 0, Key: []byte("c")},
	})
	r.signal([]stream.Change{{Kind: stream.Appended, DB: 0, Key: []byte("b")}})
	got := r.takeWoken(c)
	if want := [][]byte{[]byte("c"), []byte("a"), []byte("b")}; !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("woken = %q, want %q", got, want)
	}
	if got := r.takeWoken(c); got != nil {
		t.Fatalf("second take = %q, want nothing", got)
	}
	r.remove(c)
	r.signal([]stream.Change{{Kind: stream.Appended, DB: 0, Key: []byte("a")}})
	if got := r.takeWoken(c); got != nil {
		t.Fatalf("after remove: %q", got)
	}
}
