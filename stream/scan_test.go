package stream

import (
	"bytes"
	"fmt"
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

func TestCursorCodec(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := randKeys(r, 3000)
	keys = append(keys, []byte{}, []byte{0}, bytes.Repeat([]byte{0xff}, 126), bytes.Repeat([]byte{0}, 127))
	const db = 3
	slices.SortFunc(keys, func(a, b []byte) int {
		return bytes.Compare(storage.AppendMetaKey(nil, db, a), storage.AppendMetaKey(nil, db, b))
	})
	for i, k := range keys {
		c := encodeCursor(k)
		if c>>63 != 0 {
			t.Fatalf("cursor %d of %q has the top bit set", c, k)
		}
		if (c == 0) != (len(k) == 0) {
			t.Fatalf("cursor of %q is %d", k, c)
		}
		mk := storage.AppendMetaKey(nil, db, k)
		seek := seekKey(db, c)
		if bytes.Compare(seek, mk) > 0 {
			t.Fatalf("seek key %x of %q is past the key %x", seek, k, mk)
		}
		if i > 0 {
			prev := keys[i-1]
			pc := encodeCursor(prev)
			if pc > c {
				t.Fatalf("cursor not monotone: %q → %d, %q → %d", prev, pc, k, c)
			}
			// A key with a smaller cursor sorts before the seek key: a
			// scan resuming there skips nothing that comes after it.
			if pc < c && bytes.Compare(storage.AppendMetaKey(nil, db, prev), seek) >= 0 {
				t.Fatalf("%q (cursor %d) sorts at or after the seek key of %q (cursor %d)", prev, pc, k, c)
			}
		}
		if lo, hi := storage.MetaPrefix(db); bytes.Compare(seek, lo) < 0 || bytes.Compare(seek, hi) >= 0 {
			t.Fatalf("seek key %x outside its database", seek)
		}
	}
	// Any number is a valid cursor.
	for range 1000 {
		c := r.Uint64()
		if lo, hi := storage.MetaPrefix(db); bytes.Compare(seekKey(db, c), lo) < 0 || bytes.Compare(seekKey(db, c), hi) >= 0 {
			t.Fatalf("seek key of cursor %d outside its database", c)
		}
	}
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
	// COUNT bounds the work of one call (the keys differ early, so no
	// group of equal cursors stretches a call).
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
	for _, count := range []int64{1, 3, 10, 100} {
		t.Run(fmt.Sprint("count ", count), func(t *testing.T) {
			k := newKS(t)
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
