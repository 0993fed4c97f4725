package replication

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
)

func TestBatchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []stream.Change
		repr    []byte
	}{
		{"none", nil, []byte("0123456789ab")},
		{"appended", []stream.Change{{Kind: stream.Appended, DB: 3, Key: []byte("s")}}, []byte("reprreprrepr")},
		{"flush all", []stream.Change{{Kind: stream.Flushed, AllDBs: true}, {Kind: stream.Deleted, DB: 15, Key: []byte("")}}, []byte("xxxxxxxxxxxxyy")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := AppendBatch(nil, 42, tc.changes, tc.repr)
			off, changes, repr, err := DecodeBatch(p)
			if err != nil || off != 42 || !bytes.Equal(repr, tc.repr) || len(changes) != len(tc.changes) {
				t.Fatalf("DecodeBatch = %d, %v, %q, %v", off, changes, repr, err)
			}
			for i, c := range changes {
				w := tc.changes[i]
				if c.Kind != w.Kind || c.DB != w.DB || c.AllDBs != w.AllDBs || !bytes.Equal(c.Key, w.Key) {
					t.Errorf("change %d = %+v, want %+v", i, c, w)
				}
			}
			// Every truncation either fails or decodes a shorter repr: never panics.
			for i := range len(p) {
				DecodeBatch(p[:i])
			}
		})
	}
}

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	rec := appendRecord(appendRecord(nil, []byte("k1"), []byte("v1")), []byte("k2"), nil)
	if err := writeFrame(w, FrameRecords, rec); err != nil {
		t.Fatal(err)
	}
	if err := writeU64Frame(w, FrameAck, 7); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if got := buf.Bytes()[:5]; !bytes.Equal(got, []byte{'R', 0, 0, 0, byte(len(rec))}) {
		t.Fatalf("header = %q", got)
	}
	r := bufio.NewReader(&buf)
	typ, p, _, err := readFrame(r, nil)
	if err != nil || typ != FrameRecords {
		t.Fatal(typ, err)
	}
	var got []string
	if err := eachRecord(p, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[k1=v1 k2=]" {
		t.Fatalf("records = %v", got)
	}
	typ, p, _, err = readFrame(r, nil)
	if n, _ := decodeU64(p); err != nil || typ != FrameAck || n != 7 {
		t.Fatalf("ack = %q %d %v", typ, n, err)
	}
	if _, _, _, err := readFrame(r, nil); err == nil {
		t.Fatal("read past the end")
	}
}

func TestLogBacklogAndCursors(t *testing.T) {
	l := NewLog(100)
	id, _ := l.ID()
	repr := bytes.Repeat([]byte{'x'}, 30)
	offs := []uint64{0}
	// A primary logs nothing before its first replica attaches.
	l.AppendBatch(repr, nil)
	if st := l.Stats(); st.End != 0 {
		t.Fatalf("a log no replica has read holds [%d, %d)", st.Start, st.End)
	}
	first, err := l.NewCursor(id, 0)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	l.AppendBatch(repr, nil)
	// A cursor pins what it has not read, beyond the backlog size.
	c, err := l.NewCursor(id, offs[0])
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		l.AppendBatch(repr, nil)
	}
	if !l.Covers(id, offs[0]) {
		t.Fatal("a pinned offset was trimmed")
	}
	got, wait, err := c.Next(nil, 1)
	if err != nil || wait != nil || len(got) != 1 {
		t.Fatalf("Next = %d payloads, %v, %v", len(got), wait, err)
	}
	if off, _, r, _ := DecodeBatch(got[0]); off != offs[0] || !bytes.Equal(r, repr) {
		t.Fatalf("first payload at %d", off)
	}
	c.Close()
	st := l.Stats()
	if st.End-st.Start > 100+uint64(len(got[0])) || l.Covers(id, offs[0]) {
		t.Fatalf("unpinned log keeps [%d, %d) with a backlog of 100", st.Start, st.End)
	}
	if l.Covers("other", st.End) || !l.Covers(id, st.End) || l.Covers(id, st.End+1) {
		t.Fatal("Covers ignores the history or the offset")
	}
	if _, err := l.NewCursor(id, offs[0]); !errors.Is(err, ErrBehind) {
		t.Fatalf("cursor below the backlog: %v", err)
	}
	c, _ = l.NewCursor(id, st.End)
	if _, wait, err := c.Next(nil, 1<<20); wait == nil || err != nil {
		t.Fatalf("cursor at the end: %v %v", wait, err)
	}
	l.Reset(NewID(), 0)
	if _, _, err := c.Next(nil, 1<<20); !errors.Is(err, ErrNewHistory) {
		t.Fatalf("after Reset: %v", err)
	}
}

// TestApplyMatchesPrimary replays a primary engine's log on a replica
// engine and checks the replica answers as the primary does, derived
// state (cache, counts) included, and that OnCommit sees the appends.
func TestApplyMatchesPrimary(t *testing.T) {
	open := func(o stream.Options) *stream.Engine {
		db, err := storage.Open(storage.InMemory())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e, err := stream.Open(db, o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	log := NewLog(1 << 20)
	primary := open(stream.Options{OnApply: log.AppendBatch})
	var woken []string
	replica := open(stream.Options{OnCommit: func(cs []stream.Change) {
		for _, c := range cs {
			if c.Kind == stream.Appended {
				woken = append(woken, string(c.Key))
			}
		}
	}})
	id, _ := log.ID()
	cur, err := log.NewCursor(id, 0)
	if err != nil {
		t.Fatal(err)
	}
	xadd := func(key string, n int) {
		t.Helper()
		if err := primary.Update(func(tx *stream.Tx) error {
			_, _, err := tx.XAdd(0, []byte(key), &stream.XAddArgs{Auto: true, Fields: [][]byte{[]byte("n"), fmt.Appendf(nil, "%d", n)}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	apply := func() {
		t.Helper()
		ps, _, err := cur.Next(nil, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			_, changes, repr, err := DecodeBatch(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := replica.ApplyReplicated(repr, nil, changes, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	xlen := func(e *stream.Engine, key string) (n int64) {
		t.Helper()
		if err := e.View(func(tx *stream.Tx) error {
			var err error
			n, err = tx.XLen(0, []byte(key))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 10 {
		xadd("a", i)
	}
	apply()
	// The replica's cache now holds "a"; later batches must replace it.
	if got := xlen(replica, "a"); got != 10 {
		t.Fatalf("replica XLEN a = %d, want 10", got)
	}
	for i := range 5 {
		xadd("a", i)
		xadd("b", i)
	}
	apply()
	for _, k := range []string{"a", "b"} {
		if p, r := xlen(primary, k), xlen(replica, k); p != r {
			t.Errorf("XLEN %s: primary %d, replica %d", k, p, r)
		}
	}
	if len(woken) != 20 {
		t.Errorf("OnCommit saw %d appends, want 20", len(woken))
	}
}
