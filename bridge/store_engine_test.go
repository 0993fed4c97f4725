package bridge

import (
	"fmt"
	"slices"
	"testing"

	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
)

func openEngine(tb testing.TB, now func() int64) *stream.Engine {
	tb.Helper()
	db, err := storage.Open(storage.InMemory())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	eng, err := stream.Open(db, stream.Options{Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	return eng
}

// keyspace fills db 0 with streams s0…s<streams-1> among strings, plus a
// stream in db 1 and one that expires at now+1000 ms, which are not
// listed once the clock has passed it.
func keyspace(tb testing.TB, eng *stream.Engine, now int64, streams, strings int) {
	tb.Helper()
	err := eng.Update(func(tx *stream.Tx) error {
		for i := range max(streams, strings) {
			if i < streams {
				a := stream.XAddArgs{Auto: true, Fields: [][]byte{[]byte("f"), []byte("v")}}
				if _, _, err := tx.XAdd(0, fmt.Appendf(nil, "s%d", i), &a); err != nil {
					return err
				}
			}
			if i < strings {
				if _, _, _, err := tx.Set(0, fmt.Appendf(nil, "k%d", i), []byte("v"), stream.SetOptions{}); err != nil {
					return err
				}
			}
		}
		a := stream.XAddArgs{Auto: true, Fields: [][]byte{[]byte("f"), []byte("v")}}
		if _, _, err := tx.XAdd(1, []byte("other-db"), &a); err != nil {
			return err
		}
		if _, _, err := tx.XAdd(0, []byte("expired"), &a); err != nil {
			return err
		}
		_, err := tx.Expire(0, []byte("expired"), now+1000, stream.ExpireAlways)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// scanStreams is how Streams used to list: SCAN pages of every key,
// filtered by type. It is the reference the metadata walk must agree with.
func scanStreams(eng *stream.Engine) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		var keys [][]byte
		err := eng.View(func(tx *stream.Tx) error {
			var err error
			cursor, keys, err = tx.Scan(0, cursor, nil, 1000, "stream")
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			out = append(out, string(k))
		}
		if cursor == 0 {
			slices.Sort(out)
			return out, nil
		}
	}
}

func TestEngineStoreStreams(t *testing.T) {
	for _, n := range []int{0, 1, 999, 1000, 2500} {
		now := int64(1_800_000_000_000)
		eng := openEngine(t, func() int64 { return now })
		keyspace(t, eng, now, n, 3000)
		now += 2000
		var got []string
		if err := (EngineStore{Engine: eng}).Streams(func(k []byte) { got = append(got, string(k)) }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want, err := scanStreams(eng)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n || !slices.Equal(got, want) {
			t.Errorf("%d streams: listed %d, SCAN finds %d (%v… vs %v…)", n, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
}

// BenchmarkStoreStreams lists 10 streams among 20,000 strings.
func BenchmarkStoreStreams(b *testing.B) {
	eng := openEngine(b, nil)
	keyspace(b, eng, 0, 10, 20000)
	b.Run("meta", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := (EngineStore{Engine: eng}).Streams(func([]byte) { n++ }); err != nil || n != 10 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if names, err := scanStreams(eng); err != nil || len(names) != 10 {
				b.Fatal(len(names), err)
			}
		}
	})
}

// xaddAll adds entries to stream name in one transaction, each a list of
// field, value, …; an empty one as a "data" field with no value.
func xaddAll(t *testing.T, eng *stream.Engine, name string, entries [][]string) {
	t.Helper()
	err := eng.Update(func(tx *stream.Tx) error {
		for _, fields := range entries {
			a := stream.XAddArgs{Auto: true}
			for _, f := range fields {
				a.Fields = append(a.Fields, []byte(f))
			}
			if len(a.Fields) == 0 {
				a.Fields = [][]byte{[]byte("data"), nil}
			}
			if _, _, err := tx.XAdd(0, []byte(name), &a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateBytesMatchMessages: the engine counts a stream's bytes from
// the fields (stream/msgsize.go) by the same rules the bridge renders a
// message with; the two are kept apart, so this holds them together:
// the state's bytes equal the file-store size of the messages the bridge
// sends, for entries with and without subject, data and header fields,
// invalid header names and line breaks in values.
func TestStateBytesMatchMessages(t *testing.T) {
	eng := openEngine(t, nil)
	entries := [][]string{
		{"data", "hello"},
		{"subject", "orders.eu", "data", "x", "Order-Id", "42"},
		{"f", "v"},
		{"bad key", "v", "ok", "line\r\nbreak", "data", "a", "data", "second"},
		{"subject", "s", "subject", "again", "Nats-Msg-Id", "7"},
		{},
	}
	xaddAll(t, eng, "orders", entries)
	store := EngineStore{Engine: eng}
	st, _, err := store.State("orders")
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	err = store.Scan("orders", 1, func(e stream.SeqEntry) bool {
		hdr := appendEntryHeader(nil, e)
		n := 22 + len(e.Subject) + len(payload(e)) + 8
		if len(hdr) > 0 {
			n += 4 + len(hdr)
		}
		want += uint64(n)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != want {
		t.Fatalf("state bytes %d, the bridge's messages take %d", st.Bytes, want)
	}
}

// TestEngineStoreBySubject: NextBySubject and LastBySubject through the
// engine (its subject index, or a walk) agree with a scan that matches
// NATS filters itself, for streams whose entries all, none or some have
// a subject field.
func TestEngineStoreBySubject(t *testing.T) {
	filters := []string{"", "orders", "a.b", "a.*", "a.>", ">", "*", "*.c", "a.b.c", "nope"}
	subjects := []string{"a.b", "a.c", "a.b.c", "x"}
	for _, mode := range []string{"none", "all", "mixed"} {
		var entries [][]string
		for i := range 20 {
			fields := []string{"data", fmt.Sprint(i)}
			if mode == "all" || (mode == "mixed" && i%3 != 0) {
				fields = append(fields, "subject", subjects[i%len(subjects)])
			}
			entries = append(entries, fields)
		}
		eng := openEngine(t, nil)
		xaddAll(t, eng, "orders", entries)
		store := EngineStore{Engine: eng}
		var all []stream.SeqEntry
		if err := store.Scan("orders", 0, func(e stream.SeqEntry) bool { all = append(all, e); return true }); err != nil {
			t.Fatal(err)
		}
		for _, f := range filters {
			var want []uint64
			for _, e := range all {
				if f == "" || subjectMatches(f, e.Subject) {
					want = append(want, e.Seq)
				}
			}
			for _, from := range []uint64{0, 5, 21} {
				i := slices.IndexFunc(want, func(s uint64) bool { return s >= from })
				e, ok, err := store.NextBySubject("orders", from, f)
				if err != nil || ok != (i >= 0) || (ok && e.Seq != want[i]) {
					t.Errorf("%s: NextBySubject(%d, %q) = %d %v %v, want index %d of %v", mode, from, f, e.Seq, ok, err, i, want)
				}
			}
			e, ok, err := store.LastBySubject("orders", f)
			if err != nil || ok != (len(want) > 0) || (ok && e.Seq != want[len(want)-1]) {
				t.Errorf("%s: LastBySubject(%q) = %d %v %v, want the last of %v", mode, f, e.Seq, ok, err, want)
			}
		}
	}
}
