package tests

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var blockedClientsField = regexp.MustCompile(`(?m)^blocked_clients:(\d+)\r?$`)

// blockedClients reads blocked_clients from INFO clients.
func blockedClients(ctx context.Context, c *redis.Client) (int, error) {
	info, err := c.Info(ctx, "clients").Result()
	if err != nil {
		return 0, err
	}
	m := blockedClientsField.FindStringSubmatch(info)
	if m == nil {
		return 0, fmt.Errorf("no blocked_clients in INFO clients: %q", info)
	}
	return strconv.Atoi(m[1])
}

// waitBlocked polls INFO until exactly n clients are blocked: the only way
// to know that a blocking command has reached the server and parked.
func waitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	ctx := testContext(t)
	waitFor(t, 10*time.Second, fmt.Sprintf("blocked_clients:%d", n), func() (bool, error) {
		got, err := blockedClients(ctx, c)
		if err != nil {
			return false, err
		}
		return got == n, fmt.Errorf("blocked_clients:%d", got)
	})
}

// expectReply reads one reply on c and compares it with want byte for byte.
func expectReply(t *testing.T, c *rawConn, want string) {
	t.Helper()
	got, err := c.ReadTimeout(10 * time.Second)
	if err != nil {
		t.Fatalf("waiting for %q: %v", want, err)
	}
	if string(got) != want {
		t.Fatalf("reply\n got %q\nwant %q", got, want)
	}
}

func mustDo(t *testing.T, c *rawConn, want string, args ...string) {
	t.Helper()
	got, err := c.Do(args...)
	if err != nil || string(got) != want {
		t.Fatalf("%s = %q, %v; want %q", quoteArgs(args), got, err, want)
	}
}

// entryReply is the RESP2 XREAD reply for one entry `id f v` of stream key.
func entryReply(key, id, v string) string {
	return fmt.Sprintf("*1\r\n*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$%d\r\n%s\r\n*2\r\n$1\r\nf\r\n$%d\r\n%s\r\n",
		len(key), key, len(id), id, len(v), v)
}

func TestXReadBlockWokenByXAdd(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	reader, writer := e.Raw(), e.Raw()

	mustDo(t, writer, "$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "old")
	if err := reader.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, admin, 1)
	mustDo(t, writer, "$3\r\n2-1\r\n", "XADD", "s", "2-1", "f", "new")
	expectReply(t, reader, entryReply("s", "2-1", "new"))
	waitBlocked(t, admin, 0)

	// The connection is usable again after being served.
	mustDo(t, reader, "+PONG\r\n", "PING")
}

func TestXReadBlockGoRedis(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin, reader := e.Client(), e.Client()
	ctx := testContext(t)

	type result struct {
		streams []redis.XStream
		err     error
	}
	done := make(chan result, 1)
	go func() {
		s, err := reader.XRead(ctx, &redis.XReadArgs{Streams: []string{"s", "0"}, Block: 0}).Result()
		done <- result{s, err}
	}()
	waitBlocked(t, admin, 1)
	if err := admin.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "7-7", Values: []string{"k", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || len(r.streams) != 1 || len(r.streams[0].Messages) != 1 || r.streams[0].Messages[0].ID != "7-7" ||
			r.streams[0].Messages[0].Values["k"] != "v" {
			t.Errorf("XREAD BLOCK 0 = %+v, %v", r.streams, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("XREAD BLOCK 0 was not woken by XADD")
	}
}

func TestXReadBlockTimeout(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	c := e.Raw()
	mustDo(t, c, "$3\r\n1-0\r\n", "XADD", "s", "1-0", "f", "v")
	for _, tc := range []struct {
		proto string
		null  string
	}{{"2", "*-1\r\n"}, {"3", "_\r\n"}} {
		if _, err := c.Do("HELLO", tc.proto); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		mustDo(t, c, tc.null, "XREAD", "BLOCK", "100", "STREAMS", "s", "nope", "$", "$")
		if el := time.Since(start); el < 95*time.Millisecond {
			t.Errorf("RESP%s: XREAD BLOCK 100 returned after %v", tc.proto, el)
		}
	}
}

func TestXReadBlockDisconnect(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	r1, r2 := e.Raw(), e.Raw()
	for _, c := range []*rawConn{r1, r2} {
		if err := c.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"); err != nil {
			t.Fatal(err)
		}
	}
	waitBlocked(t, admin, 2)
	r1.Close()
	waitBlocked(t, admin, 1)
	r2.Close()
	waitBlocked(t, admin, 0)

	// Waking a stream whose readers are gone must not write to closed
	// connections or keep state around.
	c := e.Raw()
	mustDo(t, c, "$3\r\n1-0\r\n", "XADD", "s", "1-0", "f", "v")
	mustDo(t, c, ":1\r\n", "XLEN", "s")
}

func TestXReadBlockInMulti(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	c := e.Raw()
	mustDo(t, c, "+OK\r\n", "MULTI")
	mustDo(t, c, "+QUEUED\r\n", "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	mustDo(t, c, "+QUEUED\r\n", "XREAD", "BLOCK", "0", "STREAMS", "s", "0")
	mustDo(t, c, "*2\r\n*-1\r\n*-1\r\n", "EXEC")

	mustDo(t, c, "$3\r\n1-0\r\n", "XADD", "s", "1-0", "f", "v")
	mustDo(t, c, "+OK\r\n", "MULTI")
	mustDo(t, c, "+QUEUED\r\n", "XREAD", "BLOCK", "0", "STREAMS", "s", "0")
	mustDo(t, c, "+QUEUED\r\n", "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	mustDo(t, c, "*2\r\n"+entryReply("s", "1-0", "v")+"*-1\r\n", "EXEC")
}

// TestXReadBlockKeyDeleted pins what Redis 7.0 does when the stream under
// a blocked XREAD is deleted or replaced: the reader stays blocked, and `$`
// keeps meaning the last ID it saw before blocking.
func TestXReadBlockKeyDeleted(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	reader, writer := e.Raw(), e.Raw()

	mustDo(t, writer, "$3\r\n5-1\r\n", "XADD", "s", "5-1", "f", "a")
	if err := reader.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, admin, 1)
	mustDo(t, writer, ":1\r\n", "DEL", "s")
	// A new stream whose entry is not after 5-1 does not serve the reader...
	mustDo(t, writer, "$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "b")
	// ...nor does the key becoming a string.
	mustDo(t, writer, ":1\r\n", "DEL", "s")
	mustDo(t, writer, "+OK\r\n", "SET", "s", "str")
	mustDo(t, writer, ":1\r\n", "DEL", "s")
	mustDo(t, writer, "$3\r\n2-1\r\n", "XADD", "s", "2-1", "f", "c")
	// An entry after 5-1 does; had it been served earlier, the reply would
	// hold 1-1 or 2-1 or an error instead.
	mustDo(t, writer, "$3\r\n6-1\r\n", "XADD", "s", "6-1", "f", "d")
	expectReply(t, reader, entryReply("s", "6-1", "d"))
	waitBlocked(t, admin, 0)
}

// TestXReadBlockFanOut wakes several readers of one stream with one XADD
// and leaves a reader of another stream blocked.
func TestXReadBlockFanOut(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	writer := e.Raw()
	readers := []*rawConn{e.Raw(), e.Raw(), e.Raw()}
	for _, r := range readers {
		if err := r.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
			t.Fatal(err)
		}
	}
	other := e.Raw()
	if err := other.Send("XREAD", "BLOCK", "0", "STREAMS", "nope", "t", "$", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, admin, 4)
	mustDo(t, writer, "$3\r\n1-0\r\n", "XADD", "s", "1-0", "f", "v")
	for _, r := range readers {
		expectReply(t, r, entryReply("s", "1-0", "v"))
	}
	waitBlocked(t, admin, 1)
	mustDo(t, writer, "$3\r\n3-0\r\n", "XADD", "t", "3-0", "f", "w")
	expectReply(t, other, entryReply("t", "3-0", "w"))
	waitBlocked(t, admin, 0)
}

// TestXReadBlockAfterExec checks that a reader is served once the whole
// transaction has run: it sees every entry the transaction added, up to
// COUNT.
func TestXReadBlockAfterExec(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	writer, all, one := e.Raw(), e.Raw(), e.Raw()
	if err := all.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	if err := one.Send("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, admin, 2)
	mustDo(t, writer, "+OK\r\n", "MULTI")
	mustDo(t, writer, "+QUEUED\r\n", "XADD", "s", "1-0", "f", "a")
	mustDo(t, writer, "+QUEUED\r\n", "XADD", "s", "2-0", "f", "b")
	mustDo(t, writer, "*2\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n", "EXEC")
	expectReply(t, all, "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n"+
		"*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n"+
		"*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nb\r\n")
	expectReply(t, one, entryReply("s", "1-0", "a"))
}

// TestXReadBlockExplicitID blocks with an ID below the top of the stream:
// that is not blocking at all, while an ID at the top is.
func TestXReadBlockExplicitID(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	c, writer := e.Raw(), e.Raw()
	mustDo(t, writer, "$3\r\n4-0\r\n", "XADD", "s", "4-0", "f", "v")
	mustDo(t, c, entryReply("s", "4-0", "v"), "XREAD", "BLOCK", "0", "STREAMS", "s", "3")
	if err := c.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "4-0"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, admin, 1)
	mustDo(t, writer, "$3\r\n4-1\r\n", "XADD", "s", "4-*", "f", "w")
	expectReply(t, c, entryReply("s", "4-1", "w"))
}

// TestXReadBlockServesFirstWrittenKey blocks one reader on several keys
// and writes several of them in one EXEC: Redis 7.0 serves the key the
// EXEC wrote first, not the first in the reader's own key order, and skips
// a key the same EXEC deleted again.
func TestXReadBlockServesFirstWrittenKey(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin := e.Client()
	writer, reader := e.Raw(), e.Raw()
	cases := []struct {
		name   string
		queued [][]string
		want   string
	}{
		{"reverse order", [][]string{{"XADD", "c", "1-1", "f", "c1"}, {"XADD", "a", "1-1", "f", "a1"}},
			entryReply("c", "1-1", "c1")},
		{"middle first", [][]string{{"XADD", "b", "1-1", "f", "b1"}, {"XADD", "c", "1-1", "f", "c1"}, {"XADD", "a", "1-1", "f", "a1"}},
			entryReply("b", "1-1", "b1")},
		{"first written deleted", [][]string{{"XADD", "c", "1-1", "f", "c1"}, {"XADD", "b", "1-1", "f", "b1"}, {"DEL", "c"}},
			entryReply("b", "1-1", "b1")},
		{"written twice", [][]string{{"XADD", "c", "1-1", "f", "c1"}, {"XADD", "a", "1-1", "f", "a1"}, {"XADD", "c", "1-2", "f", "c2"}},
			"*1\r\n*2\r\n$1\r\nc\r\n*2\r\n" +
				"*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$2\r\nc1\r\n" +
				"*2\r\n$3\r\n1-2\r\n*2\r\n$1\r\nf\r\n$2\r\nc2\r\n"},
	}
	for _, c := range cases {
		mustDo(t, writer, ":0\r\n", "DEL", "a", "b", "c", "x")
		if err := reader.Send("XREAD", "BLOCK", "0", "STREAMS", "a", "b", "c", "0", "0", "0"); err != nil {
			t.Fatal(err)
		}
		waitBlocked(t, admin, 1)
		mustDo(t, writer, "+OK\r\n", "MULTI")
		for _, q := range c.queued {
			mustDo(t, writer, "+QUEUED\r\n", q...)
		}
		if _, err := writer.Do("EXEC"); err != nil {
			t.Fatal(err)
		}
		got, err := reader.ReadTimeout(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: reply\n got %q\nwant %q", c.name, got, c.want)
		}
		waitBlocked(t, admin, 0)
		mustDo(t, writer, "+OK\r\n", "FLUSHALL")
	}
}
