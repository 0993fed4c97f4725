package stream

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// randKeys returns n distinct keys of assorted lengths (0 to 300 bytes)
// and bytes, many sharing long prefixes.
func randKeys(r *rand.Rand, n int) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for len(out) < n {
		var k []byte
		switch r.IntN(4) {
		case 0: // short, any bytes
			k = make([]byte, r.IntN(10))
			for i := range k {
				k[i] = byte(r.IntN(256))
			}
		case 1: // a common prefix, as Redis users name keys
			k = fmt.Appendf(nil, "session:%08d", r.IntN(1e6))
		case 2: // long
			k = append(bytes.Repeat([]byte{byte(r.IntN(3))}, 120+r.IntN(20)), byte(r.IntN(256)))
		case 3:
			k = append([]byte("user:"), bytes.Repeat([]byte{0xff}, r.IntN(300))...)
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	return out
}

// collide is a scan hash under which many keys share a hash: groups of
// about a dozen among a few hundred keys.
func collide(key []byte) uint64 {
	return 1 + uint64(crc32.ChecksumIEEE(key)%37)
}

func withHash(h func([]byte) uint64) func(*Options) {
	return func(o *Options) { o.scanHash = h }
}

// TestScanSameHashNotSplit: a reply holds every key of each hash it
// visits, and its cursor is above them all, whatever COUNT says.
func TestScanSameHashNotSplit(t *testing.T) {
	for _, count := range []int64{1, 5, 40} {
		t.Run(fmt.Sprint("count ", count), func(t *testing.T) {
			k := newKS(t, withHash(collide))
			r := rand.New(rand.NewPCG(uint64(count), 3))
			group := map[uint64]map[string]bool{}
			for _, key := range randKeys(r, 400) {
				k.set(0, string(key), "v", 0)
				h := collide(key)
				if group[h] == nil {
					group[h] = map[string]bool{}
				}
				group[h][string(key)] = true
			}
			var cursor uint64
			seen := map[string]bool{}
			for calls := 0; ; calls++ {
				var keys [][]byte
				prev := cursor
				k.view(func(tx *Tx) error {
					var err error
					cursor, keys, err = tx.Scan(0, cursor, nil, count, "")
					return err
				})
				if cursor != 0 && cursor <= prev {
					t.Fatalf("cursor went from %d to %d", prev, cursor)
				}
				got := map[uint64]int{}
				for _, key := range keys {
					h := collide(key)
					if h < prev || (cursor != 0 && h >= cursor) {
						t.Fatalf("key %q (hash %d) outside the reply's range [%d, %d)", key, h, prev, cursor)
					}
					got[h]++
					seen[string(key)] = true
				}
				for h, n := range got {
					if n != len(group[h]) {
						t.Fatalf("reply split hash %d: %d of its %d keys", h, n, len(group[h]))
					}
				}
				if len(keys) < int(count) && cursor != 0 {
					t.Fatalf("reply of %d keys with COUNT %d", len(keys), count)
				}
				if cursor == 0 {
					break
				}
				if calls > 1000 {
					t.Fatal("SCAN does not terminate")
				}
			}
			if len(seen) != 400 {
				t.Fatalf("iteration returned %d of 400 keys", len(seen))
			}
		})
	}
}

// TestScanCursorIsAnyNumber: a cursor Eddy never returned is a position
// too, and one above every hash ends the iteration.
func TestScanCursorIsAnyNumber(t *testing.T) {
	k := newKS(t)
	for i := range 50 {
		k.set(0, fmt.Sprint("k", i), "v", 0)
	}
	k.view(func(tx *Tx) error {
		for _, c := range []uint64{1 << 63, 1<<64 - 1} {
			next, keys, err := tx.Scan(0, c, nil, 10, "")
			if err != nil || next != 0 || len(keys) != 0 {
				t.Errorf("SCAN %d: %d %q %v", c, next, keys, err)
			}
		}
		next, keys, err := tx.Scan(0, 1<<62, nil, 1000, "")
		if err != nil || next != 0 {
			t.Errorf("SCAN 2^62: %d %v", next, err)
		}
		for _, key := range keys {
			if storage.ScanHash(key) < 1<<62 {
				t.Errorf("SCAN 2^62 returned %q with hash %d", key, storage.ScanHash(key))
			}
		}
		return nil
	})
}

// TestScanReclaimsInWriteTx: like Redis's SCAN, SCAN deletes the expired
// keys it meets, in a write transaction at once, in a View right after.
func TestScanReclaimsInWriteTx(t *testing.T) {
	k := newKS(t)
	k.set(0, "live", "v", 0)
	k.set(0, "dead", "v", ksT0+1)
	k.now.Store(ksT0 + 1)
	k.takeChanges()
	size := func() (n int64) {
		k.view(func(tx *Tx) error { n, _ = tx.DBSize(0); return nil })
		return n
	}
	k.view(func(tx *Tx) error {
		_, keys, err := tx.Scan(0, 0, nil, 10, "")
		if err != nil || len(keys) != 1 || string(keys[0]) != "live" {
			t.Errorf("SCAN in View: %q %v", keys, err)
		}
		return err
	})
	if n := size(); n != 1 {
		t.Errorf("DBSIZE after SCAN in View = %d; want 1", n)
	}
	k.update(func(tx *Tx) error {
		_, keys, err := tx.Scan(0, 0, nil, 10, "")
		if err != nil || len(keys) != 1 || string(keys[0]) != "live" {
			t.Errorf("SCAN in Update: %q %v", keys, err)
		}
		return err
	})
	if n := size(); n != 1 {
		t.Errorf("DBSIZE after SCAN in Update = %d; want 1", n)
	}
	if ch := k.takeChanges(); !slices.Equal(ch, []string{"deleted 0 dead"}) {
		t.Errorf("noted %v", ch)
	}
	k.checkIndex()
}

// scanAll runs a SCAN iteration to its end, calling between after each
// call, and returns every key it returned (with duplicates) and the
// number of calls.
func scanAll(t *testing.T, k *ksEnv, db int, match string, count int64, typ string, between func()) ([]string, int) {
	t.Helper()
	var out []string
	var cursor uint64
	calls := 0
	for {
		var keys [][]byte
		k.view(func(tx *Tx) error {
			var err error
			var m []byte
			if match != "" {
				m = []byte(match)
			}
			cursor, keys, err = tx.Scan(db, cursor, m, count, typ)
			return err
		})
		calls++
		for _, key := range keys {
			out = append(out, string(key))
		}
		if cursor == 0 {
			return out, calls
		}
		if calls > 100000 {
			t.Fatal("SCAN does not terminate")
		}
		if between != nil {
			between()
		}
	}
}

func TestScanFilters(t *testing.T) {
	k := newKS(t)
	var want []string
	for i := range 100 {
		key := fmt.Sprintf("k%d", i)
		k.set(0, key, "v", 0)
		want = append(want, key)
	}
	k.stream(0, "s1", 1)
	k.stream(0, "s2", 1)
	k.set(0, "dead", "v", ksT0) // expired: never returned
	k.set(1, "elsewhere", "v", 0)

	cases := []struct {
		name, match, typ string
		count            int64
		want             []string
	}{
		{"all", "", "", 0, append(slices.Clone(want), "s1", "s2")},
		{"count 1", "", "", 1, append(slices.Clone(want), "s1", "s2")},
		{"count 1000", "*", "", 1000, append(slices.Clone(want), "s1", "s2")},
		{"match", "k1?", "", 7, []string{"k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19"}},
		{"type", "", "stream", 3, []string{"s1", "s2"}},
		{"type any case", "", "STREAM", 3, []string{"s1", "s2"}},
		{"type and match", "k*", "stream", 3, nil},
		{"unknown type", "", "list", 3, nil},
		{"no match", "zzz", "", 3, nil},
	}
	for _, c := range cases {
		got, _ := scanAll(t, k, 0, c.match, c.count, c.typ, nil)
		sort.Strings(got)
		sort.Strings(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: SCAN returned %q; want %q", c.name, got, c.want)
		}
	}
	// COUNT bounds the work of one call (no two of these keys share a
	// hash, so no group stretches a call).
	k.view(func(tx *Tx) error {
		next, keys, err := tx.Scan(0, 0, nil, 10, "")
		if err != nil || next == 0 || len(keys) != 10 {
			t.Errorf("SCAN 0 COUNT 10: next %d, %d keys, %v", next, len(keys), err)
		}
		return nil
	})
	if got, _ := scanAll(t, k, 5, "", 10, "", nil); len(got) != 0 {
		t.Errorf("empty database: %q", got)
	}
}

// TestScanCompleteUnderWrites checks Redis's SCAN guarantee: a key present
// from the start to the end of an iteration is returned, whatever is
// added and removed meanwhile.
func TestScanCompleteUnderWrites(t *testing.T) {
	for _, tc := range []struct {
		hash  string
		count int64
	}{{"xxhash", 1}, {"xxhash", 3}, {"xxhash", 10}, {"xxhash", 100}, {"colliding", 1}, {"colliding", 10}} {
		count := tc.count
		t.Run(fmt.Sprint(tc.hash, " count ", count), func(t *testing.T) {
			var tweaks []func(*Options)
			if tc.hash == "colliding" {
				tweaks = append(tweaks, withHash(collide))
			}
			k := newKS(t, tweaks...)
			r := rand.New(rand.NewPCG(uint64(count), 7))
			all := randKeys(r, 1200)
			stable, churn := all[:600], all[600:]
			for _, key := range stable {
				k.set(0, string(key), "v", 0)
			}
			for _, key := range churn[:300] {
				k.set(0, string(key), "v", 0)
			}
			live := slices.Clone(churn[:300])
			fresh := churn[300:]
			between := func() {
				k.update(func(tx *Tx) error {
					for range 3 {
						if len(live) > 0 {
							i := r.IntN(len(live))
							if _, err := tx.Del(0, live[i]); err != nil {
								return err
							}
							live = slices.Delete(live, i, i+1)
						}
						if len(fresh) > 0 {
							if _, _, _, err := tx.Set(0, fresh[0], []byte("v"), SetOptions{}); err != nil {
								return err
							}
							live = append(live, fresh[0])
							fresh = fresh[1:]
						}
					}
					return nil
				})
			}
			got, calls := scanAll(t, k, 0, "", count, "", between)
			seen := map[string]bool{}
			for _, g := range got {
				seen[g] = true
			}
			for _, key := range stable {
				if !seen[string(key)] {
					t.Fatalf("key %q present throughout was not returned", key)
				}
			}
			t.Logf("%d calls, %d keys returned", calls, len(got))
		})
	}
}

// TestScanRace runs SCAN iterations while another goroutine writes; run
// with -race.
func TestScanRace(t *testing.T) {
	k := newKS(t)
	for i := range 200 {
		k.set(0, fmt.Sprint("stable", i), "v", 0)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := k.e.Update(func(tx *Tx) error {
				key := []byte(fmt.Sprint("churn", i%50))
				if i%2 == 0 {
					_, err := tx.Del(0, key)
					return err
				}
				_, _, _, err := tx.Set(0, key, []byte("v"), SetOptions{})
				return err
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 5 {
		got, _ := scanAll(t, k, 0, "stable*", 7, "", nil)
		seen := map[string]bool{}
		for _, g := range got {
			seen[g] = true
		}
		if len(seen) != 200 {
			t.Errorf("SCAN saw %d of 200 stable keys", len(seen))
		}
	}
	close(stop)
	wg.Wait()
}

// BenchmarkScan measures one SCAN call over keys sharing a long prefix,
// the shape (session:<id>) that an order by name served badly.
func BenchmarkScan(b *testing.B) {
	db, err := storage.Open(storage.InMemory())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	e, err := Open(db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	const n = 100000
	err = e.Update(func(tx *Tx) error {
		for i := range n {
			key := fmt.Appendf(nil, "session:%032x", i)
			if _, _, _, err := tx.Set(0, key, []byte("v"), SetOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var cursor uint64
	for b.Loop() {
		err := e.View(func(tx *Tx) error {
			next, keys, err := tx.Scan(0, cursor, nil, 10, "")
			if len(keys) > 20 {
				b.Fatalf("one reply held %d keys", len(keys))
			}
			cursor = next
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
