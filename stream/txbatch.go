package stream

import (
	"bytes"

	"github.com/eddy-streams/eddy/storage"
)

// txBatch is a write transaction's batch. It defers the writes of the
// records a group commit rewrites over and over — a stream's metadata
// record and its tail node, rewritten by every XADD — and writes each
// once, with its last value, when the group ends (flush): a group of 50
// XADDs to one stream puts 2 records in the memtable, not 100.
//
// Every read and write of the transaction goes through it, so that a
// deferred record is never missed nor outlived:
//   - Get returns a deferred value as the batch would have;
//   - NewIter first writes the deferred records in its range, since a
//     Pebble batch iterator sees the batch as it was when it was made;
//   - Set, Delete and DeleteRange void the deferred records they
//     overwrite, so that a later flush cannot undo them.
//
// Mark and RollbackTo cover deferred records too: every change to one
// logs the state it replaces, and a rollback replays the log backwards,
// as Tx.undo does for staged metadata.
type txBatch struct {
	*storage.Batch
	recs  []deferredRec
	ix    map[string]int // index of recs by key, once there are many
	undo  []deferredUndo
	live  int    // recs not written to the batch yet
	arena []byte // keys and values of recs
}

// deferredRec is a record whose write is deferred; once written or
// voided it is no longer live.
type deferredRec struct {
	key, val []byte
	live     bool
}

// deferredUndo is what recs[i] held before a change.
type deferredUndo struct {
	i    int
	val  []byte
	live bool
}

// txMark is a point in a txBatch that RollbackTo returns to. Two marks
// are equal when nothing was written or deferred between them.
type txMark struct {
	batch      storage.Mark
	recs, undo int
}

// deferredIndexMin is the number of deferred records from which they
// are indexed by a map rather than searched.
const deferredIndexMin = 8

// Mark returns the batch's current point.
func (b *txBatch) Mark() txMark {
	return txMark{batch: b.Batch.Mark(), recs: len(b.recs), undo: len(b.undo)}
}

// RollbackTo discards every write and deferral made after m. Iterators
// opened since must be closed first.
func (b *txBatch) RollbackTo(m txMark) error {
	err := b.Batch.RollbackTo(m.batch)
	for i := len(b.undo) - 1; i >= m.undo; i-- {
		u := &b.undo[i]
		b.restore(u.i, u.val, u.live)
	}
	clear(b.undo[m.undo:])
	b.undo = b.undo[:m.undo]
	for i := m.recs; i < len(b.recs); i++ {
		if b.recs[i].live {
			b.live--
		}
		if b.ix != nil {
			delete(b.ix, string(b.recs[i].key))
		}
	}
	clear(b.recs[m.recs:])
	b.recs = b.recs[:m.recs]
	return err
}

// SetDeferred stores value under key at the latest when the batch is
// flushed; a later SetDeferred of the same key replaces it for free.
// Pebble would copy value; so does this.
func (b *txBatch) SetDeferred(key, value []byte) {
	v := b.copy(value)
	if i := b.find(key); i >= 0 {
		r := &b.recs[i]
		b.undo = append(b.undo, deferredUndo{i: i, val: r.val, live: r.live})
		b.restore(i, v, true)
		return
	}
	b.recs = append(b.recs, deferredRec{key: b.copy(key), val: v, live: true})
	b.live++
	switch n := len(b.recs); {
	case n == deferredIndexMin:
		b.ix = make(map[string]int, 2*n)
		for i := range b.recs {
			b.ix[string(b.recs[i].key)] = i
		}
	case n > deferredIndexMin:
		b.ix[string(key)] = n - 1
	}
}

// Set stores value under key now, voiding a deferred write of key.
func (b *txBatch) Set(key, value []byte) error {
	b.void(key)
	return b.Batch.Set(key, value)
}

// Delete removes key, voiding a deferred write of key.
func (b *txBatch) Delete(key []byte) error {
	b.void(key)
	return b.Batch.Delete(key)
}

// DeleteRange removes every key in [lower, upper), voiding the deferred
// writes there.
func (b *txBatch) DeleteRange(lower, upper []byte) error {
	if b.live > 0 {
		for i := range b.recs {
			if r := &b.recs[i]; r.live && inRange(r.key, lower, upper) {
				b.change(i, r.val, false)
			}
		}
	}
	return b.Batch.DeleteRange(lower, upper)
}

// Get reads key through the batch and its deferred writes.
func (b *txBatch) Get(key []byte) ([]byte, bool, error) {
	if b.live > 0 {
		if i := b.find(key); i >= 0 && b.recs[i].live {
			return b.recs[i].val, true, nil
		}
	}
	return b.Batch.Get(key)
}

// NewIter iterates [lower, upper) through the batch, once the deferred
// writes in that range are in it.
func (b *txBatch) NewIter(lower, upper []byte) (*storage.Iter, error) {
	if b.live > 0 {
		for i := range b.recs {
			if r := &b.recs[i]; r.live && inRange(r.key, lower, upper) {
				if err := b.write(i); err != nil {
					return nil, err
				}
			}
		}
	}
	return b.Batch.NewIter(lower, upper)
}

// flush writes every deferred record to the batch.
func (b *txBatch) flush() error {
	for i := 0; b.live > 0 && i < len(b.recs); i++ {
		if b.recs[i].live {
			if err := b.write(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// reset empties the batch's deferred state for the next transaction and
// lets go of the batch.
func (b *txBatch) reset() {
	b.Batch = nil
	clear(b.recs)
	b.recs = b.recs[:0]
	clear(b.undo)
	b.undo = b.undo[:0]
	b.ix, b.live = nil, 0
	if cap(b.arena) > maxKeptBuf {
		b.arena = nil
	}
	b.arena = b.arena[:0]
}

// write puts recs[i] in the batch; it is no longer deferred.
func (b *txBatch) write(i int) error {
	r := &b.recs[i]
	if err := b.Batch.Set(r.key, r.val); err != nil {
		return err
	}
	b.change(i, r.val, false)
	return nil
}

// void drops a deferred write of key: a direct write replaces it.
func (b *txBatch) void(key []byte) {
	if b.live == 0 {
		return
	}
	if i := b.find(key); i >= 0 && b.recs[i].live {
		b.change(i, b.recs[i].val, false)
	}
}

// change sets recs[i], logging what it held.
func (b *txBatch) change(i int, val []byte, live bool) {
	r := &b.recs[i]
	b.undo = append(b.undo, deferredUndo{i: i, val: r.val, live: r.live})
	b.restore(i, val, live)
}

// restore sets recs[i] without logging, keeping live counted.
func (b *txBatch) restore(i int, val []byte, live bool) {
	r := &b.recs[i]
	if r.live != live {
		if live {
			b.live++
		} else {
			b.live--
		}
	}
	r.val, r.live = val, live
}

func (b *txBatch) find(key []byte) int {
	if b.ix != nil {
		if i, ok := b.ix[string(key)]; ok {
			return i
		}
		return -1
	}
	for i := range b.recs {
		if string(b.recs[i].key) == string(key) {
			return i
		}
	}
	return -1
}

// copy returns a copy of p that stays put: a value replaced may still
// be wanted by a rollback, so the arena never reuses its space within a
// transaction (a full arena is replaced, the old one left to its users).
func (b *txBatch) copy(p []byte) []byte {
	if cap(b.arena)-len(b.arena) < len(p) {
		b.arena = make([]byte, 0, max(2*cap(b.arena), len(p), 4096))
	}
	n := len(b.arena)
	b.arena = append(b.arena, p...)
	return b.arena[n:len(b.arena):len(b.arena)]
}

// inRange reports whether lower <= key < upper (nil bounds are open).
func inRange(key, lower, upper []byte) bool {
	return (lower == nil || bytes.Compare(key, lower) >= 0) && (upper == nil || bytes.Compare(key, upper) < 0)
}
