package stream

import (
	"errors"
	"fmt"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

func openTestEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	db, e := openStoreEngine(t, storage.InMemory(), opts)
	t.Cleanup(func() { db.Close() })
	return e
}

// openStoreEngine opens the store sopts describes and an Engine on it with
// opts; tests that reopen a store, as a restart would, close the store.
func openStoreEngine(t testing.TB, sopts storage.Options, opts Options) (*storage.DB, *Engine) {
	t.Helper()
	db, err := storage.Open(sopts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(db, opts)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, e
}

func fv(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func xadd(t *testing.T, e *Engine, key string, a XAddArgs) (ID, error) {
	t.Helper()
	var id ID
	err := e.Update(func(tx *Tx) error {
		var err error
		id, _, err = tx.XAdd(0, []byte(key), &a)
		return err
	})
	return id, err
}

func TestXAddIDs(t *testing.T) {
	now := int64(1000)
	e := openTestEngine(t, Options{Now: func() int64 { return now }})
	steps := []struct {
		args XAddArgs
		want string
		err  error
	}{
		{XAddArgs{ID: ID{0, 0}}, "", ErrIDZero},
		{XAddArgs{SeqAuto: true}, "0-1", nil},
		{XAddArgs{ID: ID{5, 5}}, "5-5", nil},
		{XAddArgs{ID: ID{5, 5}}, "", ErrIDTooSmall},
		{XAddArgs{ID: ID{5, 0}, SeqAuto: true}, "5-6", nil},
		{XAddArgs{ID: ID{4, 0}, SeqAuto: true}, "", ErrIDTooSmall},
		{XAddArgs{Auto: true}, "1000-0", nil},
		{XAddArgs{Auto: true}, "1000-1", nil},
		{XAddArgs{ID: ID{2000, 0}}, "2000-0", nil},
		{XAddArgs{Auto: true}, "2000-1", nil}, // the clock is behind the top item
		{XAddArgs{ID: MaxID}, "18446744073709551615-18446744073709551615", nil},
		{XAddArgs{Auto: true}, "", ErrExhausted},
	}
	for i, s := range steps {
		s.args.Fields = fv("f", "v")
		id, err := xadd(t, e, "s", s.args)
		if !errors.Is(err, s.err) || (err == nil && id.String() != s.want) {
			t.Fatalf("step %d: got %v, %v; want %s, %v", i, id, err, s.want, s.err)
		}
	}
}

func TestRangeDelTrimInfo(t *testing.T) {
	e := openTestEngine(t, Options{Limits: func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 3} }})
	for i := 1; i <= 10; i++ {
		if _, err := xadd(t, e, "s", XAddArgs{ID: ID{uint64(i), 0}, Fields: fv("f", fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	err := e.Update(func(tx *Tx) error {
		es, err := tx.XRange(0, []byte("s"), ID{3, 0}, ID{5, 0}, -1, false)
		if err != nil || len(es) != 3 || es[0].ID != (ID{3, 0}) || string(es[2].Fields[1]) != "5" {
			t.Fatalf("XRANGE: %v %v", es, err)
		}
		es, _ = tx.XRange(0, []byte("s"), ID{}, MaxID, 2, true)
		if len(es) != 2 || es[0].ID != (ID{10, 0}) {
			t.Fatalf("XREVRANGE: %v", es)
		}
		n, err := tx.XDel(0, []byte("s"), []ID{{1, 0}, {1, 0}, {99, 0}})
		if err != nil || n != 1 {
			t.Fatalf("XDEL: %d %v", n, err)
		}
		// Nodes of 3: [1 2 3] [4 5 6] [7 8 9] [10]. MAXLEN ~ 5 removes the
		// first node only (2 live entries): removing the second would go below 5.
		n, err = tx.XTrim(0, []byte("s"), Trim{Strategy: TrimMaxLen, Approx: true, MaxLen: 5})
		if err != nil || n != 2 {
			t.Fatalf("XTRIM ~: %d %v", n, err)
		}
		n, err = tx.XTrim(0, []byte("s"), Trim{Strategy: TrimMaxLen, MaxLen: 5})
		if err != nil || n != 2 {
			t.Fatalf("XTRIM =: %d %v", n, err)
		}
		in, err := tx.XInfo(0, []byte("s"), false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if in.Length != 5 || in.RadixTreeKeys != 3 || in.First.ID != (ID{6, 0}) || in.RecordedFirst != (ID{6, 0}) ||
			in.MaxDeleted != (ID{1, 0}) || in.EntriesAdded != 10 || in.Last.ID != (ID{10, 0}) {
			t.Fatalf("XINFO: %+v", in)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An exact MINID trim removes a node whose last ID is below the minimum
// even when its entries were all deleted already, as streamTrim does, so
// it removes no entry yet changes radix-tree-keys; the node count must be
// saved, while WATCH and notifications see no write (Redis signals only
// when entries went). Each step is its own transaction.
func TestTrimRemovesEmptiedNode(t *testing.T) {
	var changes []Change
	e := openTestEngine(t, Options{
		Limits:   func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 4} },
		OnCommit: func(cs []Change) { changes = append(changes, cs...) },
	})
	key := []byte("s")
	update := func(f func(tx *Tx) error) {
		t.Helper()
		if err := e.Update(f); err != nil {
			t.Fatal(err)
		}
	}
	trim := func(minid ID, want int64) {
		t.Helper()
		changes = nil
		update(func(tx *Tx) error {
			n, err := tx.XTrim(0, key, Trim{Strategy: TrimMinID, MinID: minid})
			if err == nil && n != want {
				t.Errorf("XTRIM MINID %v: removed %d, want %d", minid, n, want)
			}
			return err
		})
		if written := len(changes) > 0; written != (want > 0) {
			t.Errorf("XTRIM MINID %v: changes %v", minid, changes)
		}
	}
	keys := func(step string, want uint64) {
		t.Helper()
		e.View(func(tx *Tx) error {
			in, err := tx.XInfo(0, key, false, 0)
			if err != nil || in.RadixTreeKeys != want {
				t.Errorf("%s: radix-tree-keys %d (%v), want %d", step, in.RadixTreeKeys, err, want)
			}
			return nil
		})
	}
	for _, id := range []ID{{121, 2}, {124, 0}} {
		if _, err := xadd(t, e, "s", XAddArgs{ID: id, Fields: fv("f", "v")}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx *Tx) error {
		_, err := tx.XDel(0, key, []ID{{124, 0}})
		return err
	})
	trim(ID{122, 1}, 1) // flags 121-2 deleted: the node's last ID, 124-0, is not below
	keys("node emptied", 1)
	trim(ID{124, 1}, 0) // the node goes whole with no live entry
	keys("node removed", 0)
	if _, err := xadd(t, e, "s", XAddArgs{ID: ID{126, 2}, Fields: fv("f", "v")}); err != nil {
		t.Fatal(err)
	}
	keys("after XADD", 1)
}

func TestDeletedStreamIsGoneAndRecreated(t *testing.T) {
	e := openTestEngine(t, Options{})
	if _, err := xadd(t, e, "s", XAddArgs{ID: ID{1, 1}, Fields: fv("a", "b")}); err != nil {
		t.Fatal(err)
	}
	err := e.Update(func(tx *Tx) error {
		m, _, _ := tx.lookup(0, []byte("s"))
		return tx.dropKey(0, []byte("s"), &m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := xadd(t, e, "s", XAddArgs{ID: ID{1, 0}, Fields: fv("c", "d")}); err != nil {
		t.Fatal(err)
	}
	e.View(func(tx *Tx) error {
		es, err := tx.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
		if err != nil || len(es) != 1 || es[0].ID != (ID{1, 0}) {
			t.Fatalf("after recreate: %v %v", es, err)
		}
		return nil
	})
}

// A stream becomes an append target of the store when its appends reach
// a multiple of appendTargetEvery, and again when its metadata is loaded
// after a restart; a short stream never does.
func TestLongStreamsAreAppendTargets(t *testing.T) {
	opts := storage.InMemory()
	db, e := openStoreEngine(t, opts, Options{})
	add := func(key string, n int) {
		t.Helper()
		err := e.Update(func(tx *Tx) error {
			for range n {
				if _, _, err := tx.XAdd(0, []byte(key), &XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	isTarget := func(key string) bool {
		t.Helper()
		var version uint64
		err := e.View(func(tx *Tx) error {
			km, ok, err := tx.lookupMeta(0, []byte(key))
			if !ok {
				return fmt.Errorf("%s: no such key", key)
			}
			version = km.meta.Version
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return db.IsAppendTarget(0, []byte(key), version)
	}

	add("long", appendTargetEvery-1)
	add("short", 10)
	if isTarget("long") || isTarget("short") {
		t.Fatalf("marked before %d appends", appendTargetEvery)
	}
	add("long", 1)
	if !isTarget("long") {
		t.Fatalf("not marked after %d appends", appendTargetEvery)
	}

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, e = openStoreEngine(t, opts, Options{})
	defer db.Close()
	if !isTarget("long") || isTarget("short") {
		t.Errorf("after a restart: long marked %v, short %v; want true, false", isTarget("long"), isTarget("short"))
	}
}

// A replica applies its primary's batches without running XADD: a long
// stream they write is marked from its metadata record. (Nothing reads
// the replica here, so the mark on a metadata cache load cannot stand in.)
func TestReplicatedLongStreamsAreAppendTargets(t *testing.T) {
	primary, replicaDB, replica, batches := openPrimaryAndReplica(t)
	defer replicaDB.Close()
	version := func(key string) uint64 {
		t.Helper()
		var m storage.Meta
		mustView(t, primary, func(tx *Tx) error {
			var err error
			m, _, err = tx.lookup(0, []byte(key))
			return err
		})
		return m.Version
	}
	for i, n := range []int{appendTargetEvery - 1, 1} {
		err := primary.Update(func(tx *Tx) error {
			for range n {
				if _, _, err := tx.XAdd(0, []byte("long"), &XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
					return err
				}
			}
			_, _, err := tx.XAdd(0, []byte("short"), &XAddArgs{Auto: true, Fields: fv("f", "v")})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(*batches) != i+1 {
			t.Fatalf("%d batches after %d updates", len(*batches), i+1)
		}
		if err := replica.ApplyReplicated((*batches)[i], nil, nil, nil); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		long := replicaDB.IsAppendTarget(0, []byte("long"), version("long"))
		short := replicaDB.IsAppendTarget(0, []byte("short"), version("short"))
		if wantLong := i == 1; long != wantLong || short {
			t.Errorf("after batch %d: long marked %v, short %v; want %v, false", i, long, short, wantLong)
		}
	}
}

// TestTxRefsAcrossSlabs: newRef hands out refs from slabs. Each ref is a
// ref of its own, handed out zeroed, in a transaction recycled or not;
// a recycled transaction keeps at most maxKeptRefs of them; and a group
// that loads more streams than that commits them all.
func TestTxRefsAcrossSlabs(t *testing.T) {
	e := openTestEngine(t, Options{})
	const n = 2*maxKeptRefs + 7
	tx := e.newTx(nil, nil)
	for round := range 2 {
		refs := make([]*streamRef, n)
		for i := range refs {
			r := tx.newRef()
			if r.db != 0 || r.recN != 0 || r.key != nil || r.sets != nil {
				t.Fatalf("round %d: ref %d handed out dirty: db %d, recN %d", round, i, r.db, r.recN)
			}
			r.db, r.recN = i+1, 1
			refs[i] = r
		}
		for i, r := range refs {
			if r.db != i+1 {
				t.Fatalf("round %d: ref %d is ref %d's too", round, i, r.db-1)
			}
		}
		e.freeTx(tx)
		if len(tx.more) != maxKeptRefs {
			t.Fatalf("round %d: a recycled transaction keeps %d refs, want %d", round, len(tx.more), maxKeptRefs)
		}
	}

	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	a := XAddArgs{Auto: true, Fields: fv("f", "v")}
	if err := e.Update(func(tx *Tx) error {
		for i := range n {
			tx.Savepoint()
			if _, _, err := tx.XAdd(0, keys[i%len(keys)], &a); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		var got int64
		if err := e.View(func(tx *Tx) (err error) { got, err = tx.XLen(0, k); return err }); err != nil {
			t.Fatal(err)
		}
		want := int64(n / len(keys))
		if i < n%len(keys) {
			want++
		}
		if got != want {
			t.Errorf("XLEN %s = %d, want %d", k, got, want)
		}
	}
}
