package stream

import (
	"runtime"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

func BenchmarkXAdd(b *testing.B) {
	e := openBenchEngine(b)
	a := XAddArgs{Auto: true, Fields: fv("field", "value")}
	key := []byte("s")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := e.Update(func(tx *Tx) error {
			_, _, err := tx.XAdd(0, key, &a)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkXRange10(b *testing.B) {
	e := openBenchEngine(b)
	key := []byte("s")
	addBenchEntries(b, e, key, 10000, "field", "value")
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			err := e.View(func(tx *Tx) error {
				es, err := tx.XRange(0, key, ID{}, MaxID, 10, false)
				if len(es) != 10 {
					b.Fatalf("got %d entries", len(es))
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		var fields int
		for i := 0; i < b.N; i++ {
			err := e.View(func(tx *Tx) error {
				n, err := tx.XRangeEach(0, key, ID{}, MaxID, 10, false, func(e Entry) error {
					fields += len(e.Fields)
					return nil
				})
				if n != 10 {
					b.Fatalf("got %d entries", n)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if fields != 20*b.N {
			b.Fatalf("%d fields in %d scans", fields, b.N)
		}
	})
}

func openBenchEngine(b *testing.B) *Engine {
	return openBenchStore(b, storage.InMemory())
}

// openBenchStore opens an engine on a store opened with sopts, closed when
// the benchmark ends.
func openBenchStore(b *testing.B, sopts storage.Options) *Engine {
	b.Helper()
	db, e := openStoreEngine(b, sopts, Options{})
	b.Cleanup(func() { db.Close() })
	return e
}

// addBenchEntries appends entries 1-0 … n-0 to key, one Update each.
func addBenchEntries(b *testing.B, e *Engine, key []byte, n int, field, value string) {
	b.Helper()
	for i := 1; i <= n; i++ {
		a := XAddArgs{ID: ID{uint64(i), 0}, Fields: fv(field, value)}
		if err := e.Update(func(tx *Tx) error { _, _, err := tx.XAdd(0, key, &a); return err }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkXReadNewest is a woken XREAD: the one entry after the
// reader's ID, with no COUNT. A wake-up runs it once per blocked client.
func BenchmarkXReadNewest(b *testing.B) {
	e := openBenchEngine(b)
	key := []byte("s")
	addBenchEntries(b, e, key, 1000, "f", "v")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		err := e.View(func(tx *Tx) error {
			es, err := tx.XRead(0, key, ID{999, 0}, 0)
			if len(es) != 1 {
				b.Fatalf("got %d entries", len(es))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkXLen(b *testing.B) {
	e := openBenchEngine(b)
	key := []byte("s")
	a := XAddArgs{Auto: true, Fields: fv("field", "value")}
	if err := e.Update(func(tx *Tx) error { _, _, err := tx.XAdd(0, key, &a); return err }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := e.View(func(tx *Tx) error {
			n, err := tx.XLen(0, key)
			if n != 1 {
				b.Fatalf("XLEN %d", n)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkXAddParallel is 50 clients appending to one stream, on a real
// directory, as redis-benchmark -c 50 does against the server: it
// measures how well concurrent Updates share a batch and a sync.
func BenchmarkXAddParallel(b *testing.B) {
	for _, m := range []struct {
		name string
		sync storage.SyncMode
	}{{"always", storage.SyncAlways}, {"everysec", storage.SyncEverySec}} {
		b.Run(m.name, func(b *testing.B) {
			e := openBenchStore(b, storage.Options{Dir: b.TempDir(), CacheSize: 8 << 20, Sync: m.sync})
			key := []byte("s")
			const clients = 50
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((clients + procs - 1) / procs)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				a := XAddArgs{Auto: true, Fields: fv("field", "value")}
				for pb.Next() {
					err := e.Update(func(tx *Tx) error {
						_, _, err := tx.XAdd(0, key, &a)
						return err
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			if g := e.groups.Load(); g > 0 {
				b.ReportMetric(float64(e.grouped.Load())/float64(g), "updates/group")
			}
		})
	}
}

// BenchmarkXRangeLevels reads 10 entries at either end and in the middle
// of a stream of 1M entries spread over the memtable and several levels,
// as a long-lived stream's are, through the server's default block cache.
func BenchmarkXRangeLevels(b *testing.B) {
	opts := storage.InMemory()
	// Pebble takes its memtables' size out of the block cache: with
	// InMemory's 8 MB nothing would be cached.
	opts.CacheSize = 64 << 20
	e := openBenchStore(b, opts)
	key := []byte("s")
	const n, per = 1_000_000, 1000
	for i := 0; i < n; i += per {
		err := e.Update(func(tx *Tx) error {
			for j := i; j < i+per; j++ {
				a := XAddArgs{ID: ID{uint64(j/10 + 1), uint64(j % 10)}, Fields: fv("field", "value-0123456789")}
				if _, _, err := tx.XAdd(0, key, &a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name   string
		lo, hi ID
		rev    bool
	}{
		{"oldest", ID{}, MaxID, false},
		{"newest", ID{}, MaxID, true},
		{"middle", ID{n / 20, 0}, MaxID, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				err := e.View(func(tx *Tx) error {
					got, err := tx.XRangeEach(0, key, bc.lo, bc.hi, 10, bc.rev, func(Entry) error { return nil })
					if got != 10 {
						b.Fatalf("got %d entries", got)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
