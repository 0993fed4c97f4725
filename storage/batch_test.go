package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// scanAll returns every record r shows, as key=value lines.
func scanAll(t *testing.T, r interface {
	NewIter(lower, upper []byte) (*Iter, error)
}, lower, upper []byte) []string {
	t.Helper()
	it, err := r.NewIter(lower, upper)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, fmt.Sprintf("%x=%s", it.Key(), it.Value()))
	}
	return out
}

// TestBatchAppendsMatchSets runs random sequences of writes, reads, marks
// and rollbacks through two batches, one taking entries with SetAppend
// and one with Set, and checks that they read alike at every step, and
// that what they commit, and what a replica applying the one's Repr
// holds, is the same.
func TestBatchAppendsMatchSets(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			dbs := [3]*DB{openMem(t), openMem(t), openMem(t)}
			streams := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
			entry := func() []byte {
				return AppendEntryKey(nil, 0, streams[rng.IntN(len(streams))], 1, uint64(rng.IntN(6)), uint64(rng.IntN(3)))
			}
			// Records among and between the streams' entries: metadata
			// and nodes.
			other := func() []byte {
				s := streams[rng.IntN(len(streams))]
				if rng.IntN(2) == 0 {
					return AppendMetaKey(nil, 0, s)
				}
				return AppendNodeKey(nil, 0, s, 1, uint64(rng.IntN(6)), 0)
			}
			key := func() []byte {
				if rng.IntN(3) == 0 {
					return other()
				}
				return entry()
			}
			// The same committed state under both.
			for range 10 {
				k, v := key(), fmt.Appendf(nil, "old%d", rng.IntN(100))
				for _, db := range dbs[:2] {
					b := db.NewBatch()
					if err := b.Set(k, v); err != nil {
						t.Fatal(err)
					}
					if err := b.Commit(); err != nil {
						t.Fatal(err)
					}
				}
			}
			app, set := dbs[0].NewBatch(), dbs[1].NewBatch()
			if seed%2 == 1 {
				app.indexed = indexedAppends // every append kept apart
			}
			type marks struct{ app, set Mark }
			var stack []marks
			lo, hi := AllData()
			for step := range 60 {
				k := key()
				v := fmt.Appendf(nil, "v%d", step)
				var ea, es error
				switch op := rng.IntN(20); {
				case op < 8:
					ea, es = app.SetAppend(k, v), set.Set(k, v)
				case op < 10:
					ea, es = app.Set(k, v), set.Set(k, v)
				case op < 11:
					ea, es = app.Delete(k), set.Delete(k)
				case op < 12:
					ea, es = app.SingleDelete(k), set.SingleDelete(k)
				case op < 13:
					k2 := key()
					if bytes.Compare(k, k2) > 0 {
						k, k2 = k2, k
					}
					ea, es = app.DeleteRange(k, k2), set.DeleteRange(k, k2)
				case op < 15:
					va, oka, ea := app.Get(k)
					vs, oks, es := set.Get(k)
					if ea != nil || es != nil || oka != oks || !bytes.Equal(va, vs) {
						t.Fatalf("step %d: Get %x: %q %v %v through appends, %q %v %v through sets", step, k, va, oka, ea, vs, oks, es)
					}
				case op < 17:
					k2 := key()
					if bytes.Compare(k, k2) > 0 {
						k, k2 = k2, k
					}
					if rng.IntN(2) == 0 {
						k, k2 = lo, hi
					}
					if a, s := scanAll(t, app, k, k2), scanAll(t, set, k, k2); !slices.Equal(a, s) {
						t.Fatalf("step %d: scan\n%v through appends\n%v through sets", step, a, s)
					}
				case op < 18:
					stack = append(stack, marks{app.Mark(), set.Mark()})
				default:
					if len(stack) == 0 {
						continue
					}
					i := rng.IntN(len(stack))
					ea, es = app.RollbackTo(stack[i].app), set.RollbackTo(stack[i].set)
					stack = stack[:i+1]
				}
				if ea != nil || es != nil {
					t.Fatalf("step %d: %v through appends, %v through sets", step, ea, es)
				}
				if app.Count() != set.Count() || app.Empty() != set.Empty() {
					t.Fatalf("step %d: count %d empty %v through appends, %d %v through sets", step, app.Count(), app.Empty(), set.Count(), set.Empty())
				}
			}
			if err := app.Apply(); err != nil {
				t.Fatal(err)
			}
			if err := dbs[2].ApplyRepr(app.Repr(), nil); err != nil {
				t.Fatal(err)
			}
			app.Close()
			if err := set.Commit(); err != nil {
				t.Fatal(err)
			}
			want := scanAll(t, dbs[1], lo, hi)
			if got := scanAll(t, dbs[0], lo, hi); !slices.Equal(got, want) {
				t.Fatalf("committed\n%v through appends\n%v through sets", got, want)
			}
			// The replica had none of the old records: compare what
			// the batch wrote, as the store's state minus the old.
			for _, line := range scanAll(t, dbs[2], lo, hi) {
				if !slices.Contains(want, line) {
					t.Fatalf("replica holds %s, which the primary does not", line)
				}
			}
		})
	}
}

// TestBatchAppendsStayOutOfIndex: appends to one stream, with its other
// records written around them, are not merged into the indexed batch,
// and a read where they lie merges them.
func TestBatchAppendsStayOutOfIndex(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	defer b.Close()
	b.indexed = indexedAppends // every append kept apart
	s := []byte("s")
	for i := range uint64(10) {
		if err := b.SetAppend(AppendEntryKey(nil, 0, s, 1, 5, i), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := b.Set(AppendNodeKey(nil, 0, s, 1, 5, 0), []byte("node")); err != nil {
			t.Fatal(err)
		}
		if err := b.Set(AppendMetaKey(nil, 0, s), []byte("meta")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := b.Get(AppendMetaKey(nil, 0, s)); err != nil {
		t.Fatal(err)
	}
	if !b.unmerged() || b.merged != 0 || b.b.Count() != 20 || b.Count() != 30 {
		t.Fatalf("unmerged %v, merged %d bytes, indexed %d of %d writes: the appends were merged", b.unmerged(), b.merged, b.b.Count(), b.Count())
	}
	if _, ok, err := b.Get(AppendEntryKey(nil, 0, s, 1, 5, 3)); err != nil || !ok {
		t.Fatalf("appended entry not read: %v %v", ok, err)
	}
	if b.unmerged() || b.b.Count() != 30 {
		t.Fatalf("a read of an appended entry left it out of the index (unmerged %v, indexed %d)", b.unmerged(), b.b.Count())
	}

	// A new batch indexes its first appends.
	b2 := db.NewBatch()
	defer b2.Close()
	for i := range uint64(indexedAppends + 2) {
		if err := b2.SetAppend(AppendEntryKey(nil, 0, s, 1, 6, i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if b2.b.Count() != indexedAppends || b2.Count() != indexedAppends+2 {
		t.Fatalf("%d of %d appends indexed, want the first %d", b2.b.Count(), b2.Count(), indexedAppends)
	}
}

// TestBatchBoundsRestartAfterMerge: after a merge, lo and hi bound only
// the appends made since, so a write among the merged ones does not merge
// the new ones.
func TestBatchBoundsRestartAfterMerge(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	defer b.Close()
	b.indexed = indexedAppends // every append kept apart
	s, u := []byte("s"), []byte("u")
	for i := range uint64(3) {
		if err := b.SetAppend(AppendEntryKey(nil, 0, s, 1, 5, i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.merge(); err != nil {
		t.Fatal(err)
	}
	for i := range uint64(3) {
		if err := b.SetAppend(AppendEntryKey(nil, 0, u, 1, 5, i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(AppendEntryKey(nil, 0, s, 1, 5, 1)); err != nil {
		t.Fatal(err)
	}
	if !b.unmerged() || b.b.Count() != 4 {
		t.Fatalf("a delete among the merged appends merged the new ones (indexed %d writes, unmerged %v)", b.b.Count(), b.unmerged())
	}
}
