package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func xlen(t *testing.T, e *Engine, db int, key string) int64 {
	t.Helper()
	var n int64
	if err := e.View(func(tx *Tx) (err error) { n, err = tx.XLen(db, []byte(key)); return err }); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMetaCacheRollbackPublishesNothing(t *testing.T) {
	e := openTestEngine(t, Options{Limits: func() NodeLimits { return NodeLimits{MaxEntries: 2} }})
	for range 3 {
		if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
			t.Fatal(err)
		}
	}
	before := xinfo(t, e, "s")
	err := e.Update(func(tx *Tx) error {
		a := XAddArgs{ID: ID{1 << 50, 0}, Fields: fv("f", "v")}
		if _, _, err := tx.XAdd(0, []byte("s"), &a); err != nil {
			return err
		}
		if _, _, err := tx.XAdd(0, []byte("new"), &a); err != nil {
			return err
		}
		if n, err := tx.XLen(0, []byte("s")); err != nil || n != 4 {
			return fmt.Errorf("XLEN inside the transaction: %d, %v", n, err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	if got := xinfo(t, e, "s"); !reflect.DeepEqual(got, before) {
		t.Fatalf("after rollback: %+v, want %+v", got, before)
	}
	if n := xlen(t, e, 0, "new"); n != 0 {
		t.Fatalf("rolled-back stream exists: XLEN %d", n)
	}
	// The tail node must be the committed one too: the next entry opens a
	// new node (MaxEntries 2, the tail holds one entry).
	if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
		t.Fatal(err)
	}
	if got := xinfo(t, e, "s"); got.Length != 4 || got.RadixTreeKeys != 2 {
		t.Fatalf("after a further XADD: length %d, nodes %d; want 4, 2", got.Length, got.RadixTreeKeys)
	}
}

func xinfo(t *testing.T, e *Engine, key string) Info {
	t.Helper()
	var info *Info
	if err := e.View(func(tx *Tx) (err error) { info, err = tx.XInfo(0, []byte(key), true, 0); return err }); err != nil {
		t.Fatal(err)
	}
	return *info
}

func TestMetaCacheInvalidation(t *testing.T) {
	tests := []struct {
		name string
		op   func(tx *Tx) error
		// want is XLEN of s afterwards, or the error XLEN gives
		want    int64
		wantErr error
		// advance moves the clock after op
		advance int64
	}{
		{"DEL", func(tx *Tx) error { _, err := tx.Del(0, []byte("s")); return err }, 0, nil, 0},
		{"RENAME away", func(tx *Tx) error { _, err := tx.Rename(0, []byte("s"), []byte("t"), false); return err }, 0, nil, 0},
		{"RENAME onto", func(tx *Tx) error {
			a := XAddArgs{Auto: true, Fields: fv("f", "v")}
			if _, _, err := tx.XAdd(0, []byte("t"), &a); err != nil {
				return err
			}
			_, err := tx.Rename(0, []byte("t"), []byte("s"), false)
			return err
		}, 1, nil, 0},
		{"FLUSHDB", func(tx *Tx) error { return tx.FlushDB(0) }, 0, nil, 0},
		{"FLUSHDB other", func(tx *Tx) error { return tx.FlushDB(1) }, 3, nil, 0},
		{"FLUSHALL", func(tx *Tx) error { return tx.FlushAll() }, 0, nil, 0},
		{"FLUSHDB then XADD", func(tx *Tx) error {
			if err := tx.FlushDB(0); err != nil {
				return err
			}
			a := XAddArgs{Auto: true, Fields: fv("f", "v")}
			_, _, err := tx.XAdd(0, []byte("s"), &a)
			return err
		}, 1, nil, 0},
		{"EXPIRE", func(tx *Tx) error { _, err := tx.Expire(0, []byte("s"), tx.Now()+10, ExpireAlways); return err }, 0, nil, 20},
		{"EXPIRE not due", func(tx *Tx) error { _, err := tx.Expire(0, []byte("s"), tx.Now()+10, ExpireAlways); return err }, 3, nil, 5},
		{"SET over stream", func(tx *Tx) error { _, _, _, err := tx.Set(0, []byte("s"), []byte("x"), SetOptions{}); return err }, 0, ErrWrongType, 0},
		{"XTRIM", func(tx *Tx) error {
			_, err := tx.XTrim(0, []byte("s"), Trim{Strategy: TrimMaxLen, MaxLen: 1})
			return err
		}, 1, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := int64(1000)
			e := openTestEngine(t, Options{Now: func() int64 { return now }})
			for range 3 {
				if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
					t.Fatal(err)
				}
			}
			if n := xlen(t, e, 0, "s"); n != 3 { // fills the cache from a View
				t.Fatalf("XLEN %d", n)
			}
			if err := e.Update(tc.op); err != nil {
				t.Fatal(err)
			}
			now += tc.advance
			var n int64
			err := e.View(func(tx *Tx) (err error) { n, err = tx.XLen(0, []byte("s")); return err })
			if !errors.Is(err, tc.wantErr) || n != tc.want {
				t.Fatalf("XLEN = %d, %v; want %d, %v", n, err, tc.want, tc.wantErr)
			}
			// What the cache answers must be what storage holds.
			if err := e.View(func(tx *Tx) error { return checkCache(tx) }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkCache compares every cached entry with the record in storage.
func checkCache(tx *Tx) error {
	c := tx.e.cache
	if c == nil {
		return nil
	}
	c.mu.Lock()
	ring := append([]*cacheEntry(nil), c.ring...)
	c.mu.Unlock()
	for _, ce := range ring {
		saved := tx.e.cache
		tx.e.cache = nil // read storage
		km, ok, err := tx.readMeta(ce.db, []byte(ce.key))
		tx.e.cache = saved
		if err != nil {
			return err
		}
		if ce.km.absent {
			if ok {
				return fmt.Errorf("cache holds %d/%q as absent, storage holds %+v", ce.db, ce.key, km)
			}
			continue
		}
		if !ok {
			return fmt.Errorf("cache holds %d/%q, storage does not", ce.db, ce.key)
		}
		cached := ce.km
		if cached.hasTail {
			s := streamRef{db: ce.db, key: []byte(ce.key), meta: km.meta}
			v, ok, err := tx.r.Get(s.nodeKey(km.sm.Tail))
			if err != nil || !ok {
				return fmt.Errorf("tail node of %q: %v %v", ce.key, ok, err)
			}
			n, err := DecodeNode(v)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(n, cached.tail) {
				return fmt.Errorf("tail node of %q: cached %+v, stored %+v", ce.key, cached.tail, n)
			}
		}
		cached.tail, cached.hasTail = Node{}, false
		if cached.sets != nil {
			s := &streamRef{db: ce.db, key: []byte(ce.key), meta: km.meta, sm: km.sm}
			stored, err := tx.fieldSets(s)
			if err != nil {
				return fmt.Errorf("field sets of %q: %v", ce.key, err)
			}
			if !reflect.DeepEqual(cached.sets, stored) {
				return fmt.Errorf("field sets of %q: cached %q, stored %q", ce.key, cached.sets.names, stored.names)
			}
			cached.sets = nil
		}
		if !reflect.DeepEqual(cached, km) {
			return fmt.Errorf("cache holds %+v for %q, storage %+v", cached, ce.key, km)
		}
	}
	return nil
}

// TestMetaCacheRandom runs the same random operations on engines with a
// cache of one key, a cache of three, and none, and requires the same
// results from all: eviction, invalidation and rollback must never show.
func TestMetaCacheRandom(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			now := int64(1000)
			opts := func(keys int) Options {
				return Options{
					Now:           func() int64 { return now },
					Limits:        func() NodeLimits { return NodeLimits{MaxEntries: 3, MaxBytes: 60} },
					MetaCacheKeys: keys,
				}
			}
			engines := []*Engine{openTestEngine(t, opts(-1)), openTestEngine(t, opts(1)), openTestEngine(t, opts(3))}
			rnd := rand.New(rand.NewPCG(seed, 7))
			for step := range 600 {
				ops := make([]randOp, 1+rnd.IntN(3))
				for i := range ops {
					ops[i] = newRandOp(rnd)
				}
				rollback := rnd.IntN(6) == 0
				var results []string
				for i, e := range engines {
					var out []string
					err := e.Update(func(tx *Tx) error {
						for _, op := range ops {
							out = append(out, op.run(tx))
						}
						if rollback {
							return errRollback
						}
						return nil
					})
					if err != nil && !errors.Is(err, errRollback) {
						t.Fatal(err)
					}
					// Read back every key from a View as well.
					if err := e.View(func(tx *Tx) error {
						for db := range 2 {
							for _, k := range cacheKeys {
								out = append(out, describeKey(tx, db, k))
							}
						}
						return checkCache(tx)
					}); err != nil {
						t.Fatalf("step %d, engine %d: %v", step, i, err)
					}
					if c := e.cache; c != nil && c.len() > c.max {
						t.Fatalf("cache holds %d keys, budget %d", c.len(), c.max)
					}
					results = append(results, fmt.Sprint(out))
				}
				for i := 1; i < len(results); i++ {
					if results[i] != results[0] {
						t.Fatalf("step %d (%v, rollback %v): engine %d differs:\n%s\nwant\n%s", step, ops, rollback, i, results[i], results[0])
					}
				}
				now += int64(rnd.IntN(5))
			}
		})
	}
}

var cacheKeys = []string{"a", "b", "c"}

type randOp struct {
	kind int
	db   int
	key  string
	dst  string
	n    int
}

func newRandOp(rnd *rand.Rand) randOp {
	return randOp{
		kind: rnd.IntN(12),
		db:   rnd.IntN(2),
		key:  cacheKeys[rnd.IntN(len(cacheKeys))],
		dst:  cacheKeys[rnd.IntN(len(cacheKeys))],
		n:    rnd.IntN(8),
	}
}

func (o randOp) String() string {
	return fmt.Sprintf("%d:%d/%s/%s/%d", o.kind, o.db, o.key, o.dst, o.n)
}

func (o randOp) run(tx *Tx) string {
	key := []byte(o.key)
	var res any
	var err error
	switch o.kind {
	case 0, 1, 2, 3: // XADD, sometimes trimming, sometimes with a field set of its own
		a := XAddArgs{Auto: true, Fields: fv("f", "v")}
		if o.n%3 == 1 {
			a.Fields = fv("g", fmt.Sprint(o.n), "h", "long value of some bytes")
		}
		switch o.n {
		case 5:
			a.Trim = Trim{Strategy: TrimMaxLen, MaxLen: 4}
		case 6:
			a.Trim = Trim{Strategy: TrimMaxLen, MaxLen: 4, Approx: true}
		}
		res, _, err = tx.XAdd(o.db, key, &a)
	case 4: // XDEL of an entry near the head or the tail
		var es []Entry
		if es, err = tx.XRange(o.db, key, ID{}, MaxID, -1, o.n%2 == 0); err == nil && len(es) > 0 {
			res, err = tx.XDel(o.db, key, []ID{es[o.n%len(es)].ID})
		}
	case 5:
		res, err = tx.XTrim(o.db, key, Trim{Strategy: TrimMaxLen, MaxLen: int64(o.n), Approx: o.n%2 == 0})
	case 6:
		res, err = tx.Del(o.db, key)
	case 7:
		res, err = tx.Rename(o.db, key, []byte(o.dst), false)
	case 8:
		_, _, res, err = tx.Set(o.db, key, []byte("x"), SetOptions{})
	case 9:
		res, err = tx.Expire(o.db, key, tx.Now()+int64(o.n), ExpireAlways)
	case 10:
		if o.n == 0 {
			err = tx.FlushAll()
		} else {
			err = tx.FlushDB(o.db)
		}
	case 11:
		err = tx.XGroupCreate(o.db, key, []byte("g"), ID{}, false, true, -1)
		if err == nil {
			_, err = tx.XReadGroup(o.db, key, ReadGroupArgs{Group: []byte("g"), Consumer: []byte("c"), Count: 2}, ID{}, true)
		}
	}
	if err != nil {
		return "err " + err.Error()
	}
	return fmt.Sprint(res)
}

func describeKey(tx *Tx, db int, key string) string {
	k := []byte(key)
	typ, err := tx.Type(db, k)
	if err != nil {
		return "err " + err.Error()
	}
	if typ != "stream" {
		return typ
	}
	info, err := tx.XInfo(db, k, true, 0)
	if err != nil {
		return "err " + err.Error()
	}
	n, err := tx.XLen(db, k)
	if err != nil {
		return "err " + err.Error()
	}
	last, _, err := tx.LastID(db, k)
	if err != nil {
		return "err " + err.Error()
	}
	j, err := json.Marshal(info) // follows pointers, as %v does not
	if err != nil {
		return "err " + err.Error()
	}
	return fmt.Sprintf("%d %v %s", n, last, j)
}

// TestMetaCacheConcurrentReaders runs Views (which fill the cache and mark
// entries under the cache's own lock) against Updates, with a budget of one
// key so that fills evict each other; run under -race.
func TestMetaCacheConcurrentReaders(t *testing.T) {
	e := openTestEngine(t, Options{MetaCacheKeys: 1})
	keys := []string{"a", "b"}
	const adds = 300
	done := make(chan struct{})
	errs := make(chan error, 4)
	for r := range 4 {
		go func() {
			var last [2]int64
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				i := r % 2
				var n int64
				var es []Entry
				err := e.View(func(tx *Tx) (err error) {
					if n, err = tx.XLen(0, []byte(keys[i])); err != nil {
						return err
					}
					es, err = tx.XRange(0, []byte(keys[i]), ID{}, MaxID, -1, false)
					return err
				})
				if err == nil && (n < last[i] || int64(len(es)) != n) {
					err = fmt.Errorf("key %s: XLEN %d after %d, XRANGE %d entries", keys[i], n, last[i], len(es))
				}
				if err != nil {
					errs <- err
					return
				}
				last[i] = n
				r++
			}
		}()
	}
	for i := range adds {
		if _, err := xadd(t, e, keys[i%2], XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if a, b := xlen(t, e, 0, "a"), xlen(t, e, 0, "b"); a+b != adds {
		t.Fatalf("XLEN a %d + b %d, want %d", a, b, adds)
	}
}
