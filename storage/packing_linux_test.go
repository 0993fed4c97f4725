package storage

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkEntriesPerRecord loads a stream's worth of entries as XADD -P 16
// writes them, 128 to a group commit with the stream's metadata record
// rewritten by each group, with per entries to a Pebble record (their
// values concatenated, keyed by the first one's ID), and reports the
// process's CPU per entry: the writer's and every background flush and
// compaction's, up to the store's settling after the load. per=1 is the
// store as it is; the others measure what packing entries into records
// would save, bytes unchanged (bench/results/HISTORY.md, "Tried on
// 2026-12-02 after 16:45").
// Reads of packed records are not written: this is the write side only.
//
//	go test -run '^$' -bench EntriesPerRecord -benchtime 1000000x ./storage/
func BenchmarkEntriesPerRecord(b *testing.B) {
	for _, per := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("per=%d", per), func(b *testing.B) {
			db, err := Open(Options{Dir: b.TempDir(), CacheSize: 8 << 20, Sync: SyncEverySec})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			const group = 128
			key := []byte("s")
			meta := AppendMetaKey(nil, 0, key)
			metaValue := make([]byte, 60)
			var k, v, rec []byte
			cpu0, wall0 := processCPU(b), time.Now()
			b.ResetTimer()
			batch := db.NewBatch()
			first := 0
			for i := range b.N {
				if i%per == 0 {
					first = i
				}
				rec = AppendEntryValueSet(rec, uint64(i+1), 1, benchFields)
				if (i+1)%per == 0 || i == b.N-1 {
					k = AppendEntryKey(k[:0], 0, key, 1, uint64(first/1000+1), uint64(first%1000))
					if err := batch.SetAppend(k, rec); err != nil {
						b.Fatal(err)
					}
					rec = rec[:0]
				}
				if (i+1)%group == 0 || i == b.N-1 {
					v = append(v[:0], metaValue...)
					if err := batch.Set(meta, v); err != nil {
						b.Fatal(err)
					}
					if err := batch.Apply(); err != nil {
						b.Fatal(err)
					}
					batch.Close()
					batch = db.NewBatch()
				}
			}
			batch.Close()
			if err := db.pdb.Flush(); err != nil {
				b.Fatal(err)
			}
			for db.pdb.Metrics().Compact.NumInProgress > 0 {
				time.Sleep(time.Millisecond) // polls the condition; nothing to wait on
			}
			b.StopTimer()
			cpu := processCPU(b) - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/entry")
			b.ReportMetric(float64(time.Since(wall0).Nanoseconds())/float64(b.N), "wall-ns/entry")
		})
	}
}

// processCPU returns the CPU time of the whole process, every thread.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
