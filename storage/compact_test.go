package storage

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

// Compact must reach every key: the fixed upper bound relies on no tag
// being 0xff.
func TestCompactEndAboveEveryTag(t *testing.T) {
	for _, tag := range []byte{tagStore, tagMeta, tagData, tagGarbage, tagExpiry, tagScan, tagReplLog} {
		if tag >= compactEnd[0] {
			t.Errorf("tag %#x is not below Compact's upper bound %#x", tag, compactEnd)
		}
	}
}

// After Compact, a deleted key version's data is gone from the tables,
// live data is intact, and nothing is left in L0 or the memtable.
func TestCompactDropsDeletedData(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir(), CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const (
		deadEntries = 20000
		liveEntries = 2000
		valueLen    = 100
	)
	rng := rand.New(rand.NewPCG(1, 2))
	value := func(i uint64) []byte {
		// Incompressible, so table sizes follow the data kept.
		v := make([]byte, valueLen)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		copy(v, []byte{byte(i >> 8), byte(i)})
		return v
	}
	write := func(version uint64, n int) map[uint64][]byte {
		want := map[uint64][]byte{}
		for i := 0; i < n; {
			b := db.NewBatch()
			for end := min(i+1000, n); i < end; i++ {
				v := value(uint64(i))
				want[uint64(i)] = v
				if err := b.Set(AppendEntryKey(nil, 0, []byte("s"), version, uint64(i), 0), v); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		return want
	}
	write(1, deadEntries)
	// Version 1 is deleted: the engine records it as garbage.
	b := db.NewBatch()
	if err := b.Set(AppendGarbageKey(nil, 1), EncodeGarbageValue(0, []byte("s"))); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	live := write(2, liveEntries)

	if err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}

	m := db.pdb.Metrics()
	if n := m.Levels[0].TablesCount; n != 0 {
		t.Errorf("L0 holds %d tables after Compact, want 0", n)
	}
	if m.MemTable.Count > 1 || m.Flush.Count == 0 {
		t.Errorf("memtables %d, flushes %d: the memtable was not flushed", m.MemTable.Count, m.Flush.Count)
	}
	var tables int64
	for _, l := range m.Levels {
		tables += l.TablesSize
	}
	liveBytes := int64(liveEntries * valueLen)
	if tables < liveBytes || tables > 2*liveBytes {
		t.Errorf("tables hold %d bytes after Compact, want between %d (live data) and %d (deleted data dropped)",
			tables, liveBytes, 2*liveBytes)
	}

	lo, hi := VersionBounds(0, []byte("s"), 1)
	assertRange(t, db, lo, hi, nil)
	lo, hi = VersionBounds(0, []byte("s"), 2)
	assertRange(t, db, lo, hi, live)
}

// assertRange checks that [lo, hi) holds exactly want, keyed by the
// entry ID's ms.
func assertRange(t *testing.T, db *DB, lo, hi []byte, want map[uint64][]byte) {
	t.Helper()
	it, err := db.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		ms, _, err := DecodeIDSuffix(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(it.Value(), want[ms]) {
			t.Fatalf("entry %d: value %x, want %x", ms, it.Value(), want[ms])
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("%d entries in range, want %d", n, len(want))
	}
}
