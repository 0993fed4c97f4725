package storage

import (
	"bytes"
	"fmt"
	"testing"
)

func TestAppendTargetSpanPolicy(t *testing.T) {
	var ts appendTargets
	if _, end, _ := ts.spanPolicy(AppendMetaKey(nil, 0, []byte("a"))); end != nil {
		t.Fatalf("no targets: end %x, want none", end)
	}
	ts.mark(AppendVersionPrefix(nil, 0, []byte("b"), 7))
	ts.mark(AppendVersionPrefix(nil, 0, []byte("d"), 3))
	bLo, bMid := KindBounds(0, []byte("b"), 7, KindEntry)
	_, bHi := VersionBounds(0, []byte("b"), 7)
	dLo, dMid := KindBounds(0, []byte("d"), 3, KindEntry)

	tests := []struct {
		name    string
		start   []byte
		wantEnd []byte
		fast    bool
	}{
		{"store record before every target", KeyCountsKey(0), bLo, false},
		{"another key before the target", AppendEntryKey(nil, 0, []byte("a"), 1, 5, 0), bLo, false},
		{"older version of the target", AppendEntryKey(nil, 0, []byte("b"), 6, 5, 0), bLo, false},
		{"first entry", AppendEntryKey(nil, 0, []byte("b"), 7, 0, 0), bMid, false},
		{"newest entry", AppendEntryKey(nil, 0, []byte("b"), 7, 1<<40, 9), bMid, false},
		{"tail node", AppendNodeKey(nil, 0, []byte("b"), 7, 1<<40, 0), bHi, true},
		{"group record", AppendGroupKey(nil, 0, []byte("b"), 7, []byte("g")), bHi, true},
		{"PEL record", AppendPELKey(nil, 0, []byte("b"), 7, []byte("g"), 1, 2), bHi, true},
		{"seq index", AppendSeqIndexKey(nil, 0, []byte("b"), 7, 100), bHi, true},
		{"metadata of the target", AppendMetaKey(nil, 0, []byte("b")), dLo, false},
		{"entries of the second target", AppendEntryKey(nil, 0, []byte("d"), 3, 1, 1), dMid, false},
		{"garbage records after every target", AppendGarbageKey(nil, 1), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy, end, err := ts.spanPolicy(tt.start)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(end, tt.wantEnd) {
				t.Errorf("end %x, want %x", end, tt.wantEnd)
			}
			if policy.PreferFastCompression != tt.fast {
				t.Errorf("PreferFastCompression %v, want %v", policy.PreferFastCompression, tt.fast)
			}
			if end != nil && bytes.Compare(end, tt.start) <= 0 {
				t.Errorf("end %x is not after start %x", end, tt.start)
			}
		})
	}
}

// The set keeps the most recently marked streams; marking one again
// keeps it in.
func TestAppendTargetsBounded(t *testing.T) {
	var ts appendTargets
	prefix := func(i int) []byte { return AppendVersionPrefix(nil, 0, fmt.Appendf(nil, "s%04d", i), 1) }
	for i := range maxAppendTargets {
		ts.mark(prefix(i))
	}
	ts.mark(prefix(0)) // now the most recent; s0001 is the oldest
	ts.mark(prefix(maxAppendTargets))
	spans := *ts.spans.Load()
	if len(spans) != maxAppendTargets {
		t.Fatalf("%d spans, want %d", len(spans), maxAppendTargets)
	}
	has := func(i int) bool {
		lo := append(prefix(i), byte(KindEntry))
		for _, s := range spans {
			if bytes.Equal(s.lo, lo) {
				return true
			}
		}
		return false
	}
	if !has(0) || !has(maxAppendTargets) || has(1) {
		t.Errorf("kept s0000 %v, s%04d %v, s0001 %v; want true, true, false", has(0), maxAppendTargets, has(maxAppendTargets), has(1))
	}
	for i := 1; i < len(spans); i++ {
		if bytes.Compare(spans[i-1].hi, spans[i].lo) > 0 {
			t.Fatalf("spans %d and %d overlap or are out of order", i-1, i)
		}
	}
}

// Appends to a marked stream, written as XADD writes them (entries, then
// the tail node and metadata record after them), flush to tables that
// hold entries only or no entries, so that a table of new entries
// overlaps nothing below it.
func TestAppendTargetTablesHoldEntriesApart(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir(), CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := []byte("s")
	const version = 1
	db.MarkAppendTarget(0, key, version)
	lo, mid := KindBounds(0, key, version, KindEntry)
	value := bytes.Repeat([]byte("v"), 60)
	ms := uint64(1)
	for range 4 {
		for range 20 {
			b := db.NewBatch()
			for range 100 {
				if err := b.Set(AppendEntryKey(nil, 0, key, version, ms, 0), value); err != nil {
					t.Fatal(err)
				}
				ms++
			}
			if err := b.Set(AppendNodeKey(nil, 0, key, version, ms-50, 0), value); err != nil {
				t.Fatal(err)
			}
			if err := b.Set(AppendMetaKey(nil, 0, key), value); err != nil {
				t.Fatal(err)
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.pdb.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	levels, err := db.pdb.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for level, ts := range levels {
		for _, ti := range ts {
			tables++
			small, large := ti.Smallest.UserKey, ti.Largest.UserKey
			holdsEntries := bytes.Compare(large, lo) >= 0 && bytes.Compare(small, mid) < 0
			if holdsEntries && (bytes.Compare(small, lo) < 0 || bytes.Compare(large, mid) >= 0) {
				t.Errorf("L%d table %x..%x holds entries and other records", level, small, large)
			}
		}
	}
	if tables == 0 {
		t.Fatal("no tables")
	}
}

// Marking a stream that is already a target, as the engine does every few
// thousand appends and a replica on every batch, allocates nothing.
func TestMarkAppendTargetRefreshDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("-race allocates")
	}
	db := openMem(t)
	key := []byte("s")
	db.MarkAppendTarget(0, key, 1)
	if n := testing.AllocsPerRun(100, func() { db.MarkAppendTarget(0, key, 1) }); n != 0 {
		t.Errorf("a refresh allocates %.0f times", n)
	}
}
