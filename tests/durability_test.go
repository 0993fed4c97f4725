package tests

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRestartKeepsData writes streams (with deletions, trims and XSETID),
// strings with and without TTLs and keys in another database, restarts the
// server, and expects every reply to be what it was before.
func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	c := e.Raw()
	setup := [][]string{
		{"CONFIG", "SET", "stream-node-max-entries", "3"},
	}
	for i := 1; i <= 10; i++ {
		setup = append(setup, []string{"XADD", "s", fmt.Sprintf("%d-%d", i, i), "f", strconv.Itoa(i), "g", "\x00"})
	}
	setup = append(setup,
		[]string{"XDEL", "s", "2-2", "5-5"},
		[]string{"XTRIM", "s", "MINID", "2"},
		[]string{"XADD", "t", "1-0", "a", "b"},
		[]string{"XDEL", "t", "1-0"},
		[]string{"XSETID", "t", "9-9", "ENTRIESADDED", "5", "MAXDELETEDID", "3-0"},
		[]string{"SET", "k", "v"},
		[]string{"SET", "n", "41"},
		[]string{"INCR", "n"},
		[]string{"SET", "ttl", "x", "EX", "100000"},
		[]string{"XADD", "ts", "1-0", "f", "v"},
		[]string{"PEXPIREAT", "ts", farFuture + "000"},
		[]string{"SELECT", "3"},
		[]string{"SET", "db3", "yes"},
		[]string{"XADD", "s", "1-0", "db", "3"},
		[]string{"SELECT", "0"},
	)
	for _, args := range setup {
		if got, err := c.Do(args...); err != nil || got[0] == '-' {
			t.Fatalf("%s = %q, %v", quoteArgs(args), got, err)
		}
	}
	checks := [][]string{
		{"XRANGE", "s", "-", "+"},
		{"XINFO", "STREAM", "s", "FULL"},
		{"XINFO", "STREAM", "t"},
		{"XADD", "t", "9-9", "f", "v"}, // still refused: the last ID survived
		{"GET", "k"},
		{"GET", "n"},
		{"OBJECT", "ENCODING", "n"},
		{"PEXPIRETIME", "ts"},
		{"EXPIRETIME", "k"},
		{"DBSIZE"},
		{"SELECT", "3"},
		{"GET", "db3"},
		{"XRANGE", "s", "-", "+"},
		{"DBSIZE"},
		{"SELECT", "0"},
	}
	// How entries are packed into nodes is not data: Redis itself repacks
	// them when it reloads (and CONFIG SET is not persisted).
	do := func(args []string) []byte {
		got, err := c.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		return withoutFields(got, "radix-tree-keys", "radix-tree-nodes")
	}
	before := make([][]byte, len(checks))
	for i, args := range checks {
		before[i] = do(args)
	}

	e.Restart()
	c = e.Raw()
	for i, args := range checks {
		if got := do(args); !bytes.Equal(got, before[i]) {
			t.Errorf("after restart, %s\n got %q\nwant %q", quoteArgs(args), got, before[i])
		}
	}
	ttl, err := c.Do("TTL", "ttl")
	if n, perr := parseIntReply(ttl); err != nil || perr != nil || n < 99000 || n > 100000 {
		t.Errorf("TTL after restart = %q, %v", ttl, err)
	}
	// The configuration is not data: a restart goes back to the default.
	mustDo(t, c, "*2\r\n$23\r\nstream-node-max-entries\r\n$3\r\n100\r\n", "CONFIG", "GET", "stream-node-max-entries")
}

// withoutFields removes the named pairs from a flat name/value reply (XINFO
// STREAM); other replies are returned as they are.
func withoutFields(reply []byte, names ...string) []byte {
	v, err := parseReply(reply)
	if err != nil || (v.typ != '*' && v.typ != '%') || len(v.elems)%2 != 0 {
		return reply
	}
	var kept []respValue
	for i := 0; i < len(v.elems); i += 2 {
		if !slices.Contains(names, v.elems[i].str) {
			kept = append(kept, v.elems[i], v.elems[i+1])
		}
	}
	v.elems = kept
	return appendValue(nil, v)
}

// TestKill9UnderLoad runs concurrent writers with --appendfsync always,
// kills the server with SIGKILL in the middle, restarts it on the same
// directory, and checks that every acknowledged XADD survived, in order,
// with nothing but possibly the one in-flight write beyond it. Two rounds
// check that a recovered store can itself recover.
func TestKill9UnderLoad(t *testing.T) {
	t.Parallel()
	const writers = 8
	e := startEddy(t, "--appendfsync", "always")
	acked := make([]int, writers) // per writer: entries 1..acked[w] were acknowledged
	for round := 1; round <= 2; round++ {
		var wg sync.WaitGroup
		var mu sync.Mutex // guards progress
		progress := 0
		enough := make(chan struct{})
		var once sync.Once
		for w := range writers {
			c := e.Raw()
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := "s" + strconv.Itoa(w)
				for j := acked[w] + 1; ; j++ {
					id := strconv.Itoa(j) + "-1"
					got, err := c.Do("XADD", key, id, "n", strconv.Itoa(j))
					if err != nil {
						return // the server is gone
					}
					if want := "$" + strconv.Itoa(len(id)) + "\r\n" + id + "\r\n"; string(got) != want {
						t.Errorf("round %d: XADD %s %s = %q", round, key, id, got)
						return
					}
					acked[w] = j
					mu.Lock()
					progress++
					if progress >= 300 {
						once.Do(func() { close(enough) })
					}
					mu.Unlock()
				}
			}()
		}
		select {
		case <-enough:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: writers made only %d acknowledged writes in 30s", round, progress)
		}
		e.Kill9()
		wg.Wait()
		if t.Failed() {
			return
		}

		e.Restart()
		c := e.Raw()
		for w := range writers {
			key := "s" + strconv.Itoa(w)
			reply, err := c.Do("XRANGE", key, "-", "+")
			if err != nil {
				t.Fatal(err)
			}
			v, err := parseReply(reply)
			if err != nil || v.typ != '*' {
				t.Fatalf("XRANGE %s = %q, %v", key, reply, err)
			}
			n := len(v.elems)
			if n < acked[w] || n > acked[w]+1 {
				t.Errorf("round %d: %s has %d entries, %d were acknowledged", round, key, n, acked[w])
			}
			for i, entry := range v.elems {
				id := strconv.Itoa(i+1) + "-1"
				if len(entry.elems) != 2 || entry.elems[0].str != id || len(entry.elems[1].elems) != 2 ||
					entry.elems[1].elems[1].str != strconv.Itoa(i+1) {
					t.Fatalf("round %d: %s entry %d is %q, want ID %s (lost or reordered)", round, key, i, appendValue(nil, entry), id)
				}
			}
			// An unacknowledged write that made it is simply part of the
			// stream now; the next round continues after it.
			acked[w] = n
		}
	}
}

// TestKill9AfterEverysecSync writes with --appendfsync everysec, waits
// for a background sync that began after the writes (INFO's eddy_syncs),
// kills the server with SIGKILL and restarts it: every write is there,
// as Redis keeps what its AOF had synced. The writes are fewer bytes
// than the journal writes out unasked (32 KB): only the background sync
// writes them.
func TestKill9AfterEverysecSync(t *testing.T) {
	t.Parallel()
	eddyOnly(t, "eddy_syncs is Eddy's")
	e := startEddy(t, "--appendfsync", "everysec")
	c := e.Client()
	ctx := testContext(t)
	const n = 100
	for i := 1; i <= n; i++ {
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: strconv.Itoa(i) + "-1", Values: []string{"n", strconv.Itoa(i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	syncs := func() int {
		n, err := strconv.Atoi(infoField(t, c, "persistence", "eddy_syncs"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The first sync to end from here may have begun before the last
	// write; the second began after. The loop syncs only when there is
	// something to sync: a write to another stream for each sync seen
	// gives it that, and no more (more would fill the 32 KB).
	after, seen := syncs()+2, -1
	waitFor(t, 10*time.Second, "two background syncs", func() (bool, error) {
		n := syncs()
		if n >= after {
			return true, nil
		}
		if n != seen {
			seen = n
			return false, c.XAdd(ctx, &redis.XAddArgs{Stream: "other", Values: []string{"f", "v"}}).Err()
		}
		return false, nil
	})
	e.Kill9()
	e.Restart()
	c = e.Client()
	got, err := c.XRange(ctx, "s", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d of %d entries after SIGKILL", len(got), n)
	}
	for i, m := range got {
		if want := strconv.Itoa(i+1) + "-1"; m.ID != want || m.Values["n"] != strconv.Itoa(i+1) {
			t.Fatalf("entry %d is %s %v, want %s", i, m.ID, m.Values, want)
		}
	}
}

// TestMetaCacheSizes runs the same writes and reads on servers whose
// metadata cache is the default, two keys (evicting on almost every
// command) and off: every reply must be the same, before and after a
// restart.
func TestMetaCacheSizes(t *testing.T) {
	t.Parallel()
	eddyOnly(t, "--meta-cache-keys is Eddy's")
	var cmds [][]string
	for i := range 60 {
		key := fmt.Sprintf("s%d", i%7)
		cmds = append(cmds, []string{"XADD", key, fmt.Sprintf("%d-1", i+1), "f", strconv.Itoa(i)})
		if i%10 == 9 {
			cmds = append(cmds, []string{"XTRIM", key, "MAXLEN", "3"}, []string{"XDEL", "s1", fmt.Sprintf("%d-1", i)})
		}
	}
	var reads [][]string
	for i := range 7 {
		key := fmt.Sprintf("s%d", i)
		reads = append(reads, []string{"XLEN", key}, []string{"XRANGE", key, "-", "+"},
			[]string{"XINFO", "STREAM", key})
	}
	replies := func(e *eddyProc, restart bool) []string {
		c := e.Raw()
		var out []string
		for _, cmd := range cmds {
			got, err := c.Do(cmd...)
			if err != nil {
				t.Fatalf("%s: %v", quoteArgs(cmd), err)
			}
			out = append(out, string(got))
		}
		if restart {
			c.Close()
			e.Restart()
			c = e.Raw()
		}
		for _, cmd := range reads {
			got, err := c.Do(cmd...)
			if err != nil {
				t.Fatalf("%s: %v", quoteArgs(cmd), err)
			}
			out = append(out, string(got))
		}
		return out
	}
	want := replies(startEddy(t), false)
	for _, keys := range []string{"2", "0"} {
		e := startEddy(t, "--meta-cache-keys", keys)
		if got, err := e.Raw().Do("CONFIG", "GET", "meta-cache-keys"); err != nil || !bytes.Contains(got, []byte("\r\n"+keys+"\r\n")) {
			t.Fatalf("meta-cache-keys %s: CONFIG GET = %q, %v", keys, got, err)
		}
		for i, got := range replies(e, true) {
			if got != want[i] {
				t.Errorf("meta-cache-keys %s, reply %d: %q, want %q", keys, i, got, want[i])
			}
		}
	}
}
