package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestRecordFilter writes one stream's entries and point records to
// tables and checks that Gets find every record, that a Get of a missing
// stream's metadata is answered by the filters, and that entries are not
// in them.
func TestRecordFilter(t *testing.T) {
	// No compaction: the store's format record is flushed alone when it
	// is created (initFormat), so the flush below makes a second L0
	// table, and a compaction of the two may end its tables around the
	// streams (targets.go), leaving "m" between two tables, where no
	// filter is asked (4 runs in 100 failed so).
	db, err := Open(WithTuning(InMemory(), func(o *pebble.Options) { o.DisableAutomaticCompactions = true }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	name := []byte("s")
	const entries = 4000
	var keys [][]byte
	b := db.NewBatch()
	for i := uint64(1); i <= entries; i++ {
		k := AppendEntryKey(nil, 0, name, 1, i, 0)
		b.Set(k, []byte("v"))
		if i%1000 == 0 {
			keys = append(keys, k)
		}
		if i%100 == 1 {
			b.Set(AppendNodeKey(nil, 0, name, 1, i, 0), []byte("n"))
		}
	}
	// Streams "a" and "z" put the missing "m" inside the tables' bounds,
	// where only a filter can tell it is not there.
	keys = append(keys,
		AppendMetaKey(nil, 0, []byte("a")),
		AppendMetaKey(nil, 0, []byte("z")),
		AppendMetaKey(nil, 0, name),
		AppendNodeKey(nil, 0, name, 1, 101, 0),
		AppendGroupKey(nil, 0, name, 1, []byte("g")),
		AppendConsumerKey(nil, 0, name, 1, []byte("g"), []byte("c")),
		AppendFieldSetKey(nil, 0, name, 1, 1),
		AppendPELKey(nil, 0, name, 1, []byte("g"), 7, 0),
	)
	for _, k := range keys {
		b.Set(k, []byte("v"))
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.pdb.Flush(); err != nil {
		t.Fatal(err)
	}

	for _, k := range keys {
		if _, ok, err := db.Get(k); err != nil || !ok {
			t.Errorf("Get(%x) after flush: found %v, err %v", k, ok, err)
		}
	}

	hits := db.pdb.Metrics().Filter.Hits
	if _, ok, err := db.Get(AppendMetaKey(nil, 0, []byte("m"))); err != nil || ok {
		t.Fatalf("Get of a missing stream's metadata: found %v, err %v", ok, err)
	}
	if got := db.pdb.Metrics().Filter.Hits; got <= hits {
		t.Errorf("a missing stream's metadata: filter hits %d, then %d; the filters were not used", hits, got)
	}
	before := db.pdb.Metrics().Filter
	if _, ok, err := db.Get(AppendEntryKey(nil, 0, name, 1, entries+1, 0)); err != nil || ok {
		t.Fatalf("Get of a missing entry: found %v, err %v", ok, err)
	}
	if after := db.pdb.Metrics().Filter; after.Hits != before.Hits || after.Misses <= before.Misses {
		t.Errorf("a missing entry: filter hits %d, then %d, misses %d, then %d; entries must pass the filters", before.Hits, after.Hits, before.Misses, after.Misses)
	}

	// A filter over every key would take ~10 bits for each of the 4,000
	// entries (5 KB); one over the ~50 point records takes well under 1 KB.
	tables, err := db.pdb.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var size, n uint64
	for _, level := range tables {
		for _, tb := range level {
			if tb.Properties.FilterPolicyName != recordFilterName {
				t.Errorf("table %s: filter policy %q, want %q", tb.FileNum, tb.Properties.FilterPolicyName, recordFilterName)
			}
			size += tb.Properties.FilterSize
			n++
		}
	}
	if n == 0 || size == 0 || size > 1024 {
		t.Errorf("%d tables, filters of %d bytes in all; want some, under 1 KB", n, size)
	}
}

// withoutFilters tunes a store as it was before the record filters: no
// filter written, and none known to read tables with.
func withoutFilters(o *pebble.Options) {
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = pebble.NoFilterPolicy
	}
	o.Filters = nil
}

// TestRecordFilterOldTables opens a store whose tables were written
// without filters, as every store before the filters was, and one whose
// tables have them with a build that does not know the policy (the
// binary before it, or Pebble's read-only open): each reads every table.
func TestRecordFilterOldTables(t *testing.T) {
	keys := [][]byte{
		AppendMetaKey(nil, 0, []byte("a")),
		AppendMetaKey(nil, 0, []byte("z")),
		AppendGroupKey(nil, 0, []byte("a"), 1, []byte("g")),
	}
	for _, c := range []struct {
		name          string
		write, reopen func(*pebble.Options)
	}{
		{"tables without filters, read with them", withoutFilters, nil},
		{"tables with filters, read without the policy", nil, withoutFilters},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(WithTuning(Options{Dir: dir}, c.write))
			if err != nil {
				t.Fatal(err)
			}
			b := db.NewBatch()
			for _, k := range keys {
				b.Set(k, []byte("v"))
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil { // flushes: the keys are in a table
				t.Fatal(err)
			}
			db, err = Open(WithTuning(Options{Dir: dir}, c.reopen))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, k := range keys {
				if _, ok, err := db.Get(k); err != nil || !ok {
					t.Errorf("Get(%x): found %v, err %v", k, ok, err)
				}
			}
			if _, ok, err := db.Get(AppendMetaKey(nil, 0, []byte("m"))); err != nil || ok {
				t.Errorf("missing key: found %v, err %v", ok, err)
			}
		})
	}
}

// BenchmarkGet reads point records and entries from flushed and compacted
// tables, with the record filters and without any: a missing stream's
// metadata (what a stream's first XADD reads), a present one, and an
// entry, which passes the filters but has Pebble read each table's filter
// block on the way.
func BenchmarkGet(b *testing.B) {
	// Streams s0000, s0002, ...: the odd names are missing, and their
	// keys fall inside the tables' bounds.
	const streams, perStream = 200, 1000
	name := func(s int) []byte { return []byte(fmt.Sprintf("s%04d", s)) }
	build := func(b *testing.B, tune func(*pebble.Options)) *DB {
		opts := InMemory()
		opts.CacheSize = 64 << 20 // every block stays cached: the reads' own cost
		db, err := Open(WithTuning(opts, tune))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		for s := 0; s < streams; s++ {
			name := name(2 * s)
			bt := db.NewBatch()
			bt.Set(AppendMetaKey(nil, 0, name), []byte("meta"))
			for i := uint64(0); i < perStream; i++ {
				bt.Set(AppendEntryKey(nil, 0, name, 1, i, 0), []byte("value-of-an-entry"))
			}
			if err := bt.Commit(); err != nil {
				b.Fatal(err)
			}
			if s%20 == 19 {
				if err := db.pdb.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		}
		// Left as Pebble's compactions leave it, in several levels, as
		// in a live store, once no compaction runs. The debt is an
		// estimate that Pebble does not always pay off (two make bench
		// runs waited here for over ten minutes): past ten seconds, no
		// compaction running is enough.
		deadline := time.Now().Add(10 * time.Second)
		for m := db.pdb.Metrics(); m.Compact.NumInProgress > 0 || m.Compact.EstimatedDebt > 0 && time.Now().Before(deadline); m = db.pdb.Metrics() {
			time.Sleep(time.Millisecond)
		}
		return db
	}
	for _, policy := range []struct {
		name string
		tune func(*pebble.Options)
	}{{"filters", nil}, {"none", withoutFilters}} {
		db := build(b, policy.tune)
		for _, c := range []struct {
			name string
			key  func(i int) []byte
			want bool
		}{
			{"meta-missing", func(i int) []byte { return AppendMetaKey(nil, 0, name(2*(i%streams)+1)) }, false},
			{"meta", func(i int) []byte { return AppendMetaKey(nil, 0, name(2*(i%streams))) }, true},
			{"entry", func(i int) []byte {
				return AppendEntryKey(nil, 0, name(2*(i%streams)), 1, uint64(i*7919)%perStream, 0)
			}, true},
		} {
			keys := make([][]byte, 1024)
			for i := range keys {
				keys[i] = c.key(i * 31)
			}
			b.Run(c.name+"/"+policy.name, func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, ok, err := db.Get(keys[i%len(keys)]); err != nil || ok != c.want {
						b.Fatalf("Get: found %v, err %v", ok, err)
					}
				}
			})
		}
	}
}

// TestMissingRecordsReadNoLargeBlock: with every table at the bottom
// level, as a compacted store has them, a Get of a record that does not
// exist is answered by the filters, the bottom level's included, and
// reads no data block, however large the block next to the key: a block
// holding a 4 MB value fits no cache shard, and was decompressed again for
// every such Get (an XREAD of 10,000 missing streams took seconds).
func TestMissingRecordsReadNoLargeBlock(t *testing.T) {
	db, err := Open(WithTuning(InMemory(), func(o *pebble.Options) { o.DisableAutomaticCompactions = true }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	name := []byte("s")
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(rand.Uint32()) // random, so that the block stays large compressed
	}
	// Stream s's table: its metadata and an entry, then group "zzzz",
	// whose 4 MB record is a block of its own. The missing groups "g…"
	// (names are length-prefixed: as long as "zzzz") sort between them,
	// inside the table's bounds, right before that block.
	b := db.NewBatch()
	b.Set(AppendMetaKey(nil, 0, name), []byte("meta"))
	b.Set(AppendEntryKey(nil, 0, name, 1, 1, 0), []byte("v"))
	b.Set(AppendGroupKey(nil, 0, name, 1, []byte("zzzz")), big)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.pdb.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, false); err != nil {
		t.Fatal(err)
	}
	if m := db.pdb.Metrics(); m.Levels[6].TablesCount == 0 || m.Levels[0].TablesCount != 0 {
		t.Fatalf("tables by level: L0 %d, L6 %d; want all at the bottom", m.Levels[0].TablesCount, m.Levels[6].TablesCount)
	}
	before := db.pdb.Metrics()
	const gets = 100
	for i := range gets {
		key := AppendGroupKey(nil, 0, name, 1, []byte(fmt.Sprintf("g%03d", i)))
		if _, ok, err := db.Get(key); err != nil || ok {
			t.Fatalf("Get of a missing group: found %v, err %v", ok, err)
		}
	}
	after := db.pdb.Metrics()
	if hits := after.Filter.Hits - before.Filter.Hits; hits < gets*9/10 {
		t.Errorf("%d Gets of missing groups: %d answered by a filter; want nearly all", gets, hits)
	}
	// The filter and index blocks, and a false positive or two of the
	// filter: without the filters, a block a Get (103 of 100).
	if read := after.BlockCache.Misses - before.BlockCache.Misses; read > gets/10 {
		t.Errorf("%d Gets of missing groups read %d blocks; want the filter's and a few", gets, read)
	}
	if v, ok, err := db.Get(AppendGroupKey(nil, 0, name, 1, []byte("zzzz"))); err != nil || !ok || len(v) != len(big) {
		t.Errorf("Get of the group that exists: %d bytes, found %v, err %v", len(v), ok, err)
	}
}
