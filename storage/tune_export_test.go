package storage

import (
	"context"

	"github.com/cockroachdb/pebble/v2"
)

// WithTuning returns opts with f applied to the Pebble options after
// Eddy's own, for the tuning benchmarks (tune_bench_test.go).
func WithTuning(opts Options, f func(*pebble.Options)) Options {
	opts.tune = f
	return opts
}

// CompactAll flushes the memtables and compacts every key down to the
// bottom level, so that the store's size is that of its live data.
func CompactAll(db *DB) error {
	return db.pdb.Compact(context.Background(), []byte{0}, []byte{0xff}, true)
}

// PebbleMetrics returns the store's Pebble metrics.
func PebbleMetrics(db *DB) *pebble.Metrics { return db.pdb.Metrics() }
