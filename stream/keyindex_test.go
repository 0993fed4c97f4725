package stream

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// fullCount counts the committed metadata records of every database, the
// way the key counts should have them, and returns the scan index
// entries they call for.
func (k *ksEnv) fullCount() (map[int]keyCounts, map[string]bool) {
	k.t.Helper()
	counts := map[int]keyCounts{}
	scan := map[string]bool{}
	lo, hi := storage.AllData()
	it, err := k.e.db.NewIter(lo, hi)
	if err != nil {
		k.t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if !storage.IsMetaKey(it.Key()) {
			continue
		}
		db, key, err := storage.DecodeMetaKey(it.Key())
		if err != nil {
			k.t.Fatal(err)
		}
		m, err := storage.DecodeMeta(it.Value())
		if err != nil {
			k.t.Fatal(err)
		}
		c := counts[db]
		c.keys++
		c.expires += hasTTL(&m)
		counts[db] = c
		scan[string(storage.AppendScanKey(nil, db, k.e.opts.scanHash(key), key))] = true
	}
	return counts, scan
}

// checkKeyIndex fails unless the scan index holds exactly one entry per
// metadata record and the key counts (in memory, stored, and as DBSIZE and
// INFO keyspace report them) equal a full count.
func (k *ksEnv) checkKeyIndex() {
	k.t.Helper()
	want, scan := k.fullCount()
	it, err := k.e.db.NewIter([]byte{0x22}, []byte{0x23})
	if err != nil {
		k.t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		if !scan[string(it.Key())] {
			db, h, key, _ := storage.DecodeScanKey(it.Key())
			k.t.Errorf("stray scan index entry: db %d hash %d key %q", db, h, key)
		}
		delete(scan, string(it.Key()))
	}
	it.Close()
	for sk := range scan {
		db, h, key, _ := storage.DecodeScanKey([]byte(sk))
		k.t.Errorf("missing scan index entry: db %d hash %d key %q", db, h, key)
	}

	stored := map[int]keyCounts{}
	lo, hi := storage.KeyCountsBounds()
	it, err = k.e.db.NewIter(lo, hi)
	if err != nil {
		k.t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		db, err := storage.DecodeKeyCountsKey(it.Key())
		if err != nil {
			k.t.Fatal(err)
		}
		keys, exp, err := storage.DecodeKeyCounts(it.Value())
		if err != nil {
			k.t.Fatal(err)
		}
		if keys != 0 || exp != 0 {
			stored[db] = keyCounts{int64(keys), int64(exp)}
		}
	}
	it.Close()

	k.view(func(tx *Tx) error {
		dbs := map[int]bool{}
		for _, m := range []map[int]keyCounts{want, stored, k.e.counts} {
			for db := range m {
				dbs[db] = true
			}
		}
		for db := range dbs {
			if stored[db] != want[db] {
				k.t.Errorf("db %d: stored counts %+v; full count %+v", db, stored[db], want[db])
			}
			if k.e.counts[db] != want[db] {
				k.t.Errorf("db %d: counts in memory %+v; full count %+v", db, k.e.counts[db], want[db])
			}
			n, _ := tx.DBSize(db)
			keys, exp, _ := tx.KeyspaceStats(db)
			if n != want[db].keys || keys != want[db].keys || exp != want[db].expires {
				k.t.Errorf("db %d: DBSIZE %d, keyspace %d/%d; full count %+v", db, n, keys, exp, want[db])
			}
		}
		return nil
	})
}

// reopen opens a second Engine on the same store, as a restart would,
// and checks that it loads the same counts.
func (k *ksEnv) reopen() {
	k.t.Helper()
	e, err := Open(k.e.db, k.e.opts)
	if err != nil {
		k.t.Fatal(err)
	}
	k.view(func(*Tx) error {
		for db, c := range k.e.counts {
			if e.counts[db] != c {
				k.t.Errorf("db %d after reopen: %+v; before %+v", db, e.counts[db], c)
			}
		}
		if len(e.counts) != len(k.e.counts) {
			k.t.Errorf("reopen loaded %d databases' counts; %d before", len(e.counts), len(k.e.counts))
		}
		return nil
	})
}

var errRollback = errors.New("test: roll back")

// TestKeyCountsRandom applies random operation sequences, several per
// transaction, and checks after each that the counts and the scan index
// equal a full count of the metadata.
func TestKeyCountsRandom(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			var tweaks []func(*Options)
			if seed%2 == 1 {
				tweaks = append(tweaks, withHash(collide))
			}
			k := newKS(t, tweaks...)
			r := rand.New(rand.NewPCG(seed, 11))
			key := func() []byte { return fmt.Appendf(nil, "k%d", r.IntN(12)) }
			ttl := func() int64 {
				if r.IntN(3) == 0 {
					return 0
				}
				return k.now.Load() + int64(r.IntN(50)) - 5 // sometimes already past
			}
			ops := []func(tx *Tx, db int) error{
				func(tx *Tx, db int) error { // SET, maybe with a TTL or KEEPTTL
					_, _, _, err := tx.Set(db, key(), []byte("v"), SetOptions{ExpireAt: ttl(), KeepTTL: r.IntN(4) == 0, NX: r.IntN(8) == 0})
					return err
				},
				func(tx *Tx, db int) error {
					a := XAddArgs{Auto: true, NoMkStream: r.IntN(5) == 0, Fields: fv("f", "v")}
					if r.IntN(4) == 0 {
						a.Trim = Trim{Strategy: TrimMaxLen, MaxLen: 0}
					}
					_, _, err := tx.XAdd(db, key(), &a)
					if errors.Is(err, ErrWrongType) {
						return nil
					}
					return err
				},
				func(tx *Tx, db int) error { _, err := tx.Del(db, key()); return err },
				func(tx *Tx, db int) error {
					_, err := tx.Expire(db, key(), k.now.Load()+int64(r.IntN(60))-10, ExpireCond(r.IntN(5)))
					return err
				},
				func(tx *Tx, db int) error { _, err := tx.Persist(db, key()); return err },
				func(tx *Tx, db int) error {
					_, err := tx.Rename(db, key(), key(), r.IntN(2) == 0)
					if errors.Is(err, ErrNoSuchKey) {
						return nil
					}
					return err
				},
				func(tx *Tx, db int) error {
					_, err := tx.IncrBy(db, key(), 1)
					if errors.Is(err, ErrWrongType) || errors.Is(err, ErrNotInteger) {
						return nil
					}
					return err
				},
				func(tx *Tx, db int) error {
					_, err := tx.Append(db, key(), []byte("x"))
					if errors.Is(err, ErrWrongType) {
						return nil
					}
					return err
				},
				func(tx *Tx, db int) error {
					_, _, err := tx.GetDel(db, key())
					if errors.Is(err, ErrWrongType) {
						return nil
					}
					return err
				},
				func(tx *Tx, db int) error { _, err := tx.Exists(db, key()); return err }, // lazy expiry
				func(tx *Tx, db int) error { _, _, err := tx.Scan(db, 0, nil, 5, ""); return err },
				func(tx *Tx, db int) error {
					if r.IntN(4) == 0 {
						return tx.FlushDB(db)
					}
					return nil
				},
				func(tx *Tx, db int) error {
					if r.IntN(12) == 0 {
						return tx.FlushAll()
					}
					return nil
				},
			}
			for step := range 400 {
				switch r.IntN(10) {
				case 0:
					k.now.Add(int64(r.IntN(20)))
				case 1:
					if _, err := k.e.ExpireCycle(r.IntN(5)); err != nil {
						t.Fatal(err)
					}
				}
				rollback := r.IntN(10) == 0
				err := k.e.Update(func(tx *Tx) error {
					for range 1 + r.IntN(4) {
						if err := ops[r.IntN(len(ops))](tx, r.IntN(3)); err != nil {
							return err
						}
					}
					// The transaction sees its own changes.
					for db := range 3 {
						c := tx.keyCounts(db)
						if c.keys < 0 || c.expires < 0 || c.expires > c.keys {
							return fmt.Errorf("db %d: counts %+v inside the transaction", db, c)
						}
					}
					if rollback {
						return errRollback
					}
					return nil
				})
				if err != nil && !(rollback && errors.Is(err, errRollback)) {
					t.Fatalf("step %d: %v", step, err)
				}
				k.checkKeyIndex()
				if t.Failed() {
					t.Fatalf("step %d", step)
				}
			}
			k.checkIndex()
			k.reopen()
		})
	}
}

// TestKeyIndexBuiltForOldStore: a store written before the key index
// existed (no counts, no scan index, no marker) gets both at Open.
func TestKeyIndexBuiltForOldStore(t *testing.T) {
	k := newKS(t)
	const n = buildBatchKeys + 500 // more than one build batch
	k.update(func(tx *Tx) error {
		for i := range n {
			var at int64
			if i%3 == 0 {
				at = ksT0 + 1000
			}
			if _, _, _, err := tx.Set(i%2, fmt.Appendf(nil, "key:%d", i), []byte("v"), SetOptions{ExpireAt: at}); err != nil {
				return err
			}
		}
		return nil
	})
	k.stream(3, "s", 5)
	want, _ := k.fullCount()

	// Forget the key index, as an earlier build never wrote it.
	b := k.e.db.NewBatch()
	lo, hi := storage.KeyCountsBounds()
	for _, err := range []error{
		b.DeleteRange(lo, hi),
		b.DeleteRange([]byte{0x22}, []byte{0x23}),
		b.Delete(storage.KeyIndexKey()),
		b.Commit(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	e, err := Open(k.e.db, k.e.opts)
	if err != nil {
		t.Fatal(err)
	}
	k.e = e
	for db, c := range want {
		if e.counts[db] != c {
			t.Errorf("db %d: built counts %+v; want %+v", db, e.counts[db], c)
		}
	}
	k.checkKeyIndex()
	got, _ := scanAll(t, k, 0, "", 1000, "", nil)
	if int64(len(got)) != want[0].keys {
		t.Errorf("SCAN of db 0 after the build returned %d keys; want %d", len(got), want[0].keys)
	}
	k.reopen()
}

// TestScanAcrossRestart: a cursor stays valid when the engine restarts.
func TestScanAcrossRestart(t *testing.T) {
	k := newKS(t)
	for i := range 100 {
		k.set(0, fmt.Sprint("k", i), "v", 0)
	}
	seen := map[string]bool{}
	var cursor uint64
	for {
		var keys [][]byte
		k.view(func(tx *Tx) error {
			var err error
			cursor, keys, err = tx.Scan(0, cursor, nil, 7, "")
			return err
		})
		for _, key := range keys {
			seen[string(key)] = true
		}
		if cursor == 0 {
			break
		}
		e, err := Open(k.e.db, k.e.opts)
		if err != nil {
			t.Fatal(err)
		}
		k.e = e
	}
	if len(seen) != 100 {
		t.Errorf("saw %d of 100 keys", len(seen))
	}
}
