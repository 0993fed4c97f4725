package stream

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// rawKey describes what storage holds for key: its metadata record as
// written and, for a stream, every node record of its version. It reads
// around the metadata cache, so it sees what deferred writes left.
func rawKey(tx *Tx, db int, key string) string {
	v, ok, err := tx.r.Get(storage.AppendMetaKey(nil, db, []byte(key)))
	if err != nil || !ok {
		return fmt.Sprint(ok, err)
	}
	m, err := storage.DecodeMeta(v)
	if err != nil {
		return err.Error()
	}
	out := fmt.Sprintf("meta %x", v)
	if m.Type != storage.TypeStream {
		return out
	}
	// Whether a stream is packed depends on how its entries were
	// grouped (records.go): the rest of the record must agree.
	sm, err := decodeStreamMeta(m.Body)
	if err != nil {
		return err.Error()
	}
	sm.Packed = 0
	m.Body = sm.appendBinary(nil)
	out = fmt.Sprintf("meta %x", storage.AppendMeta(nil, &m))
	lo, hi := storage.KindBounds(db, []byte(key), m.Version, storage.KindNode)
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return err.Error()
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		out += fmt.Sprintf(" node %x=%x", it.Key()[len(lo):], it.Value())
	}
	return out
}

// TestDeferredWritesMatchOneByOne runs the same random commands on two
// engines: one commits each command alone, the other runs several in one
// Update with a savepoint each, rolling some back. Replies, and the
// metadata and node records in storage, must agree: deferred writes are
// seen by the commands that follow, are not lost to iterations, range
// deletions or renames, and vanish with a rollback.
func TestDeferredWritesMatchOneByOne(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			now := int64(1000)
			opts := func(keys int) Options {
				return Options{
					Now:           func() int64 { return now },
					Limits:        func() NodeLimits { return NodeLimits{MaxEntries: 3, MaxBytes: 60} },
					MetaCacheKeys: keys,
				}
			}
			alone, grouped := openTestEngine(t, opts(0)), openTestEngine(t, opts(1+int(seed)%3-2))
			rnd := rand.New(rand.NewPCG(seed, 11))
			for step := range 300 {
				ops := make([]randOp, 1+rnd.IntN(8))
				failed := make([]bool, len(ops))
				for i := range ops {
					ops[i] = newRandOp(rnd)
					if ops[i].kind == 10 && rnd.IntN(4) != 0 {
						ops[i].kind = rnd.IntN(4) // fewer flushes
					}
					failed[i] = rnd.IntN(5) == 0
				}
				var want, got []string
				for i, op := range ops {
					err := alone.Update(func(tx *Tx) error {
						want = append(want, op.run(tx))
						if failed[i] {
							return errRollback
						}
						return nil
					})
					if err != nil && !errors.Is(err, errRollback) {
						t.Fatal(err)
					}
				}
				if err := grouped.Update(func(tx *Tx) error {
					for i, op := range ops {
						sp := tx.Savepoint()
						got = append(got, op.run(tx))
						if failed[i] {
							if err := tx.RollbackTo(sp); err != nil {
								return err
							}
						}
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				for _, e := range []*Engine{alone, grouped} {
					var out []string
					mustView(t, e, func(tx *Tx) error {
						for db := range 2 {
							for _, k := range cacheKeys {
								out = append(out, rawKey(tx, db, k), describeKey(tx, db, k))
							}
						}
						return checkCache(tx)
					})
					if e == alone {
						want = append(want, out...)
					} else {
						got = append(got, out...)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("step %d (%v, failed %v):\n got %v\nwant %v", step, ops, failed, got, want)
				}
				now += int64(rnd.IntN(3))
			}
		})
	}
}

// TestGroupWithOnlyDeferredWrites: a function of a group whose only write
// is deferred (XSETID rewrites the metadata record alone) has written, and
// its write survives the rollback of a function after it.
func TestGroupWithOnlyDeferredWrites(t *testing.T) {
	e := openTestEngine(t, Options{})
	if _, err := xadd(t, e, "s", XAddArgs{ID: ID{1, 0}, Fields: fv("f", "v")}); err != nil {
		t.Fatal(err)
	}
	errs := commitTogether(t, e,
		func(tx *Tx) error { return tx.XSetID(0, []byte("s"), XSetIDArgs{ID: ID{5, 0}, EntriesAdded: 10}) },
		func(tx *Tx) error {
			if _, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{ID: ID{9, 0}, Fields: fv("f", "v")}); err != nil {
				return err
			}
			return errRollback
		},
		func(tx *Tx) error {
			_, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{ID: ID{7, 0}, Fields: fv("f", "v")})
			return err
		},
	)
	if errs[0] != nil || !errors.Is(errs[1], errRollback) || errs[2] != nil {
		t.Fatal(errs)
	}
	mustView(t, e, func(tx *Tx) error {
		m, _, err := tx.r.Get(storage.AppendMetaKey(nil, 0, []byte("s")))
		if err != nil {
			return err
		}
		meta, err := storage.DecodeMeta(m)
		if err != nil {
			return err
		}
		sm, err := decodeStreamMeta(meta.Body)
		if err != nil {
			return err
		}
		if sm.Last != (ID{7, 0}) || sm.Length != 2 || sm.EntriesAdded != 11 {
			t.Errorf("stored metadata: last %v length %d added %d; want 7-0, 2, 11", sm.Last, sm.Length, sm.EntriesAdded)
		}
		return nil
	})
	checkCacheMatchesStore(t, e, 0, []byte("s"))
}

// BenchmarkXAddBatched is 50 XADDs to one stream in one Update, each
// behind its savepoint, as a full group commit (or a pipeline) runs
// them: the metadata record and tail node are rewritten by each.
func BenchmarkXAddBatched(b *testing.B) {
	// 400: the event loop's groups under XADD -P 16 from 50 clients with
	// appendfsync always, which bring the clients back together.
	for _, group := range []int{50, 400} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) {
			e := openBenchStore(b, storage.Options{Dir: b.TempDir(), CacheSize: 8 << 20, Sync: storage.SyncEverySec})
			key := []byte("s")
			a := XAddArgs{Auto: true, Fields: fv("field", "value")}
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Update(func(tx *Tx) error {
					for range group {
						tx.Savepoint()
						if _, _, err := tx.XAdd(0, key, &a); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*group), "ns/xadd")
		})
	}
}

// TestDeferredIndexAfterRollback: a rollback that leaves fewer deferred
// records than the index starts at drops the index, so the records
// deferred next are found: Get returns them, and deferring one again
// replaces it. With the index kept, a consumer record deferred after a
// failed function that had deferred many was not found, and the group
// created the consumer twice (TestGroupCacheAgreesWithStorage, seed 113,
// without the cache).
func TestDeferredIndexAfterRollback(t *testing.T) {
	for _, kept := range []int{0, deferredIndexMin - 1, deferredIndexMin, deferredIndexMin + 1} {
		t.Run(fmt.Sprint(kept), func(t *testing.T) {
			e := openTestEngine(t, Options{})
			key := func(i int) []byte { return []byte(fmt.Sprintf("\x01zz-deferred-%02d", i)) }
			err := e.Update(func(tx *Tx) error {
				b := tx.b
				for i := range kept {
					b.SetDeferred(key(i), []byte("kept"))
				}
				m := b.Mark()
				for i := kept; i < kept+2*deferredIndexMin; i++ {
					b.SetDeferred(key(i), []byte("rolled back"))
				}
				if err := b.RollbackTo(m); err != nil {
					return err
				}
				for i := kept; i < kept+3; i++ {
					b.SetDeferred(key(i), []byte("first"))
					b.SetDeferred(key(i), []byte("second"))
					v, ok, err := b.Get(key(i))
					if err != nil || !ok || string(v) != "second" {
						t.Errorf("Get of deferred record %d after the rollback: %q, %v, %v", i, v, ok, err)
					}
				}
				if len(b.recs) != kept+3 || b.live != kept+3 {
					t.Errorf("%d deferred records (%d live), want %d", len(b.recs), b.live, kept+3)
				}
				return errDeliberate // nothing to keep
			})
			if !errors.Is(err, errDeliberate) {
				t.Fatal(err)
			}
		})
	}
}

// TestGroupAppendsAgreeWithSingleCommands runs random XADDs (past the
// batch's first indexed appends, so that most stay out of its index),
// reads, deletions, trims and rolled-back commands in one transaction,
// each behind its savepoint as a group commit runs them, and the same
// commands one transaction each: every read and the committed streams
// must agree.
func TestGroupAppendsAgreeWithSingleCommands(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			group, single := openTestEngine(t, Options{}), openTestEngine(t, Options{})
			keys := [][]byte{[]byte("a"), []byte("b")}
			var ids []ID
			type result struct {
				entries []Entry
				n       int64
			}
			// step runs one command on tx; rollback undoes it after.
			type step struct {
				run      func(tx *Tx) (result, error)
				rollback bool
			}
			var steps []step
			for i := range 120 {
				key := keys[rng.IntN(len(keys))]
				switch op := rng.IntN(10); {
				case op < 6:
					id := ID{Ms: uint64(i + 1)}
					a := XAddArgs{ID: id, Fields: fv("f", fmt.Sprint(i))}
					if rng.IntN(8) == 0 {
						a.Trim = Trim{Strategy: TrimMaxLen, MaxLen: int64(rng.IntN(20))}
					}
					rollback := rng.IntN(10) == 0
					if !rollback {
						ids = append(ids, id)
					}
					steps = append(steps, step{run: func(tx *Tx) (result, error) {
						_, _, err := tx.XAdd(0, key, &a)
						return result{}, err
					}, rollback: rollback})
				case op < 8:
					rev := rng.IntN(2) == 0
					count := int64(rng.IntN(30)) - 1 // -1: all
					steps = append(steps, step{run: func(tx *Tx) (result, error) {
						es, err := tx.XRange(0, key, ID{}, MaxID, count, rev)
						if err != nil {
							return result{}, err
						}
						n, err := tx.XLen(0, key)
						return result{entries: es, n: n}, err
					}})
				case op < 9:
					if len(ids) == 0 {
						continue
					}
					del := []ID{ids[rng.IntN(len(ids))]}
					steps = append(steps, step{run: func(tx *Tx) (result, error) {
						n, err := tx.XDel(0, key, del)
						return result{n: n}, err
					}})
				default:
					maxLen := int64(rng.IntN(40))
					steps = append(steps, step{run: func(tx *Tx) (result, error) {
						n, err := tx.XTrim(0, key, Trim{Strategy: TrimMaxLen, MaxLen: maxLen})
						return result{n: n}, err
					}})
				}
			}
			var inGroup []result
			if err := group.Update(func(tx *Tx) error {
				for _, s := range steps {
					sp := tx.Savepoint()
					r, err := s.run(tx)
					if err != nil {
						return err
					}
					if s.rollback {
						if err := tx.RollbackTo(sp); err != nil {
							return err
						}
						continue
					}
					inGroup = append(inGroup, r)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var alone []result
			for _, s := range steps {
				if s.rollback {
					continue
				}
				if err := single.Update(func(tx *Tx) error {
					r, err := s.run(tx)
					alone = append(alone, r)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range alone {
				if fmt.Sprint(inGroup[i]) != fmt.Sprint(alone[i]) {
					t.Fatalf("command %d: %v in one group, %v alone", i, inGroup[i], alone[i])
				}
			}
			for _, key := range keys {
				var got, want []Entry
				if err := group.View(func(tx *Tx) (err error) {
					got, err = tx.XRange(0, key, ID{}, MaxID, -1, false)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if err := single.View(func(tx *Tx) (err error) {
					want, err = tx.XRange(0, key, ID{}, MaxID, -1, false)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("stream %s committed\n%v in one group\n%v alone", key, got, want)
				}
			}
		})
	}
}
