package replication

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

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
	for _, crc := range []bool{false, true} {
		t.Run(fmt.Sprint("crc=", crc), func(t *testing.T) {
			var buf bytes.Buffer
			w := bufio.NewWriter(&buf)
			rec := appendRecord(appendRecord(nil, []byte("k1"), []byte("v1")), []byte("k2"), nil)
			if err := writeFrame(w, crc, FrameRecords, rec); err != nil {
				t.Fatal(err)
			}
			if err := writeU64Frame(w, crc, FrameAck, 7); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if got := buf.Bytes()[:5]; !bytes.Equal(got, []byte{'R', 0, 0, 0, byte(len(rec))}) {
				t.Fatalf("header = %q", got)
			}
			wantLen := 2*frameHeader + len(rec) + 8
			if crc {
				wantLen += 4 * crcLen
			}
			if buf.Len() != wantLen {
				t.Fatalf("two frames take %d bytes, want %d", buf.Len(), wantLen)
			}
			r := bufio.NewReader(&buf)
			typ, p, _, err := readFrame(r, crc, nil)
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
			typ, p, _, err = readFrame(r, crc, nil)
			if n, _ := decodeU64(p); err != nil || typ != FrameAck || n != 7 {
				t.Fatalf("ack = %q %d %v", typ, n, err)
			}
			if _, _, _, err := readFrame(r, crc, nil); err == nil {
				t.Fatal("read past the end")
			}
		})
	}
}

// TestFrameChecksum flips every bit of a checksummed frame in turn: the
// frame must never be read as valid, and a damaged header must be caught
// before its length is trusted (the read fails at once, not at EOF).
func TestFrameChecksum(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	payload := AppendBatch(nil, 42, []stream.Change{{Kind: stream.Appended, Key: []byte("s")}}, []byte("repr-bytes"))
	if err := writeFrame(w, true, FrameBatch, payload); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	frame := buf.Bytes()
	for i := range len(frame) * 8 {
		bad := bytes.Clone(frame)
		bad[i/8] ^= 1 << (i % 8)
		// Followed by plenty of bytes, so that a damaged length that was
		// trusted would read on instead of failing at EOF.
		in := append(bad, make([]byte, 1<<12)...)
		_, _, _, err := readFrame(bufio.NewReader(bytes.NewReader(in)), true, nil)
		if !errors.Is(err, ErrChecksum) {
			t.Fatalf("bit %d flipped: readFrame = %v, want a checksum error", i, err)
		}
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

// TestLogShift: after Shift a reader of the previous history continues
// from any offset up to where it ended (under the new id), one beyond it
// does not, Reset forgets the previous history, and open cursors learn of
// the new id by failing.
func TestLogShift(t *testing.T) {
	l := NewLog(1 << 20)
	old, _ := l.ID()
	open, err := l.NewCursor(old, 0)
	if err != nil {
		t.Fatal(err)
	}
	var offs []uint64
	for range 3 {
		_, end := l.ID()
		offs = append(offs, end)
		l.AppendBatch([]byte("0123456789ab"), nil)
	}
	_, end := l.ID()
	l.Shift("new")
	if st := l.Stats(); st.ID != "new" || st.ID2 != old || st.End2 != end || st.End != end {
		t.Fatalf("Stats after Shift = %+v", st)
	}
	if _, _, err := open.Next(nil, 1<<20); !errors.Is(err, ErrNewHistory) {
		t.Fatalf("a cursor open across Shift: %v", err)
	}
	l.AppendBatch([]byte("written after the promotion"), nil)
	_, newEnd := l.ID()
	for _, tc := range []struct {
		id   string
		off  uint64
		want bool
	}{
		{old, offs[0], true},
		{old, offs[2], true},
		{old, end, true},
		{old, newEnd, false}, // beyond the old history's end
		{old, offs[1] + 1, false},
		{"new", offs[1], true},
		{"new", newEnd, true},
		{"other", end, false},
	} {
		if got := l.Covers(tc.id, tc.off); got != tc.want {
			t.Errorf("Covers(%s, %d) = %v, want %v", tc.id, tc.off, got, tc.want)
		}
	}
	c, err := l.NewCursor(old, offs[1])
	if err != nil {
		t.Fatal(err)
	}
	if c.ID() != "new" {
		t.Errorf("a cursor of the previous history reads %q, want the new one", c.ID())
	}
	got, _, err := c.Next(nil, 1<<20)
	if err != nil || len(got) != 3 {
		t.Fatalf("Next = %d payloads, %v; want the old history's last two and the new one", len(got), err)
	}
	c.Close()
	l.Reset("third", 0)
	if st := l.Stats(); st.ID2 != "" || l.Covers(old, 0) {
		t.Fatalf("after Reset: %+v", st)
	}
}

// TestReplicaOfPrimaryWithoutCRC: a primary from before feature "crc"
// answers REPLCONF eddy-proto with a bare +OK; the replica then sends and
// expects frames without checksums, and the link works both ways (the
// primary reads its acks).
func TestReplicaOfPrimaryWithoutCRC(t *testing.T) {
	open := func(o stream.Options) (*storage.DB, *stream.Engine) {
		db, err := storage.Open(storage.InMemory())
		if err != nil {
			t.Fatal(err)
		}
		e, err := stream.Open(db, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, e
	}
	plog := NewLog(1 << 20)
	_, peng := open(stream.Options{OnApply: plog.AppendBatch})
	primary := NewPrimary(plog, peng, nil)
	xadd := func() {
		t.Helper()
		if err := peng.Update(func(tx *stream.Tx) error {
			_, _, err := tx.XAdd(0, []byte("s"), &stream.XAddArgs{Auto: true, Fields: [][]byte{[]byte("f"), []byte("v")}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	xadd()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		br := bufio.NewReader(conn)
		for {
			args, err := readCommand(br)
			if err != nil {
				served <- err
				return
			}
			switch args[0] {
			case "PING":
				fmt.Fprint(conn, "+PONG\r\n")
			case "REPLCONF":
				fmt.Fprint(conn, "+OK\r\n") // an old primary names no features
			case "PSYNC":
				served <- primary.Serve(conn, PSync{ID: args[1], Offset: -1, IP: "127.0.0.1"}, done)
				return
			}
		}
	}()

	_, reng := open(stream.Options{})
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	pn, _ := strconv.Atoi(port)
	r := StartReplica(ReplicaConfig{Host: "127.0.0.1", Port: pn, Engine: reng, Log: NewLog(1 << 20)})
	defer r.Stop()
	xadd()
	_, end := plog.ID()
	deadline := time.Now().Add(10 * time.Second)
	for {
		reps := primary.Replicas()
		if st := r.Status(); st.LinkUp && st.Offset == int64(end) && len(reps) == 1 && reps[0].Offset == end {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %+v, primary sees %+v; want both at %d", r.Status(), primary.Replicas(), end)
		}
		select {
		case err := <-served:
			t.Fatalf("the link ended: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	var n int64
	if err := reng.View(func(tx *stream.Tx) error {
		var err error
		n, err = tx.XLen(0, []byte("s"))
		return err
	}); err != nil || n != 2 {
		t.Fatalf("XLEN s on the replica = %d, %v", n, err)
	}
	close(done)
}

// readCommand reads one RESP array of bulk strings.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		if _, err := br.ReadString('\n'); err != nil { // $len
			return nil, err
		}
		a, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimSuffix(a, "\r\n")
	}
	return args, nil
}
