package storage

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// writeStalls keeps account of the times Pebble stopped writes: L0 at
// its stop threshold, or every memtable waiting for its flush. A stop
// holds every XADD of the server until it ends, and nothing else shows
// it: a 19 s stop behind one long compaction was found only by logging
// Pebble's events (see CompactionConcurrencyRange in setCompactions), so
// the store counts them for INFO.
type writeStalls struct {
	now func() time.Time // time.Now unless a test sets it

	mu    sync.Mutex
	count uint64        // guarded by mu: stops begun
	total time.Duration // guarded by mu: length of the stops that ended
	since time.Time     // guarded by mu: start of the stop in progress, or zero
}

func newWriteStalls() *writeStalls { return &writeStalls{now: time.Now} }

// begin is Pebble's WriteStallBegin.
func (w *writeStalls) begin(pebble.WriteStallBeginInfo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.since.IsZero() {
		return // Pebble reports one stop at a time; be safe if not
	}
	w.count++
	w.since = w.now()
}

// end is Pebble's WriteStallEnd.
func (w *writeStalls) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		return
	}
	w.total += w.now().Sub(w.since)
	w.since = time.Time{}
}

// WriteStallStats is what the store knows of its write stops since it
// was opened.
type WriteStallStats struct {
	Count   uint64        // stops begun
	Total   time.Duration // their length, a stop in progress included
	Stalled bool          // writes are stopped now
}

func (w *writeStalls) stats() WriteStallStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := WriteStallStats{Count: w.count, Total: w.total, Stalled: !w.since.IsZero()}
	if s.Stalled {
		s.Total += w.now().Sub(w.since)
	}
	return s
}

// WriteStalls reports the store's write stops since it was opened.
func (db *DB) WriteStalls() WriteStallStats { return db.stalls.stats() }
