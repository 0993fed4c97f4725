package storage

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// TestPebbleOptions holds the tuned settings (their measurements are in
// the comments of pebbleOptions and its helpers) so that a change to them
// is deliberate.
func TestPebbleOptions(t *testing.T) {
	cache := pebble.NewCache(1 << 20)
	defer cache.Unref()
	po := pebbleOptions(InMemory(), cache, newWriteStalls(), &appendTargets{})
	if po.MemTableSize != 8<<20 || po.MemTableStopWritesThreshold != 2 {
		t.Errorf("memtables %d x %d, want 8 MB x 2", po.MemTableSize, po.MemTableStopWritesThreshold)
	}
	if po.L0CompactionThreshold != 4 || po.L0StopWritesThreshold != 12 {
		t.Errorf("L0 thresholds %d/%d, want 4/12", po.L0CompactionThreshold, po.L0StopWritesThreshold)
	}
	if po.LBaseMaxBytes != 1<<20 {
		t.Errorf("LBaseMaxBytes %d, want 1 MB", po.LBaseMaxBytes)
	}
	for i, size := range po.TargetFileSizes {
		if size != 2<<20 {
			t.Errorf("target file size %d: %d, want 2 MB", i, size)
		}
	}
	if lo, hi := po.CompactionConcurrencyRange(); lo != 1 || hi < 2 {
		t.Errorf("compaction concurrency %d-%d, want 1 and at least 2", lo, hi)
	}
	if po.Experimental.SpanPolicyFunc == nil {
		t.Error("no span policy: append targets' entries share tables with their other records")
	}
	if n := po.Experimental.L0CompactionConcurrency; n != 4 {
		t.Errorf("L0CompactionConcurrency %d, want 4", n)
	}
	for i, l := range po.Levels {
		want := sstable.BalancedCompression
		if i == 0 {
			want = sstable.FastestCompression
		}
		if got := l.Compression(); got != want {
			t.Errorf("L%d compression %s, want %s", i, got.Name, want.Name)
		}
		if l.BlockSize != 4<<10 {
			t.Errorf("L%d block size %d, want 4096", i, l.BlockSize)
		}
		if l.FilterPolicy.Name() != recordFilterName {
			t.Errorf("L%d filter policy %q, want %q", i, l.FilterPolicy.Name(), recordFilterName)
		}
	}

	tuned := pebbleOptions(WithTuning(InMemory(), func(o *pebble.Options) { o.MemTableSize = 1 << 20 }), cache, newWriteStalls(), &appendTargets{})
	if tuned.MemTableSize != 1<<20 {
		t.Errorf("tuning hook not applied: memtable %d", tuned.MemTableSize)
	}
}
