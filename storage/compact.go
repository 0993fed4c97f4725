package storage

import "context"

// compactEnd is above every key the store holds: each key starts with a
// tag byte (keys.go), and no tag is 0xff.
var compactEnd = []byte{0xff}

// Compact rewrites the whole store into its final shape: it first drops
// the data of deleted keys (as the background collector would), then
// flushes the memtables and compacts every level down, so that deleted
// and overwritten data no longer takes disk space. It is for offline
// use (`eddy compact`) and for measuring the store's size; a serving
// store compacts by itself. The work is spread over Pebble's compaction
// concurrency.
func (db *DB) Compact(ctx context.Context) error {
	if err := db.collectGarbage(); err != nil {
		return err
	}
	return db.pdb.Compact(ctx, nil, compactEnd, true)
}

// DiskUsage is the bytes of the store's files: Pebble's (tables,
// manifest) as it accounts them, and the journal's segments.
func (db *DB) DiskUsage() uint64 {
	return db.pdb.Metrics().DiskSpaceUsage() + uint64(db.journal.size.Load())
}
