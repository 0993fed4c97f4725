package stream

import (
	"bytes"
	"slices"

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

	// ordered are writes whose order matters only among themselves: the
	// Sets and SingleDeletes of the PEL's per-owner index
	// (group_store.go). They reach the batch in key order (stably) when
	// the transaction ends, or before anything reads or deletes a range
	// within pendLo..pendHi, the keys of those not written yet (pending).
	// Pebble inserts a batch into its memtable record by record, and an
	// insert next to the one before skips the skiplist's descent: written
	// per command, every XREADGROUP and XACK of a group commit paid one
	// for its index records.
	ordered        []orderedWrite
	orderedKeys    []byte
	pending        int
	pendLo, pendHi []byte
	// checkOrdered, when set, checks each ordered write as it reaches
	// the batch (checkPELWrites).
	checkOrdered func(key []byte, del bool) error
	// encodeLazy appends to dst the value of the lazy record key, as
	// it stands now (Tx.encodeLazyMeta).
	encodeLazy func(key, dst []byte) ([]byte, error)
	lazyBuf    []byte
}

// orderedWrite is a queued write of key orderedKeys[start:end]: a
// SingleDelete if del, else a Set of an empty value. at is the batch's
// point when it was written, if it was.
type orderedWrite struct {
	start, end int
	del        bool
	written    bool
	at         storage.Mark
}

// deferredRec is a record whose write is deferred; once written or
// voided it is no longer live. A lazy one has no value yet: encodeLazy
// makes it when it is wanted (SetDeferredLazy).
type deferredRec struct {
	key, val []byte
	live     bool
	lazy     bool
}

// deferredUndo is what recs[i] held before a change.
type deferredUndo struct {
	i    int
	val  []byte
	live bool
	lazy bool
}

// txMark is a point in a txBatch that RollbackTo returns to. Two marks
// are equal when nothing was written or deferred between them.
type txMark struct {
	batch               storage.Mark
	recs, undo, ordered int
}

// deferredIndexMin is the number of deferred records from which they
// are indexed by a map rather than searched.
const deferredIndexMin = 8

// Mark returns the batch's current point.
func (b *txBatch) Mark() txMark {
	return txMark{batch: b.Batch.Mark(), recs: len(b.recs), undo: len(b.undo), ordered: len(b.ordered)}
}

// RollbackTo discards every write and deferral made after m. Iterators
// opened since must be closed first.
func (b *txBatch) RollbackTo(m txMark) error {
	err := b.Batch.RollbackTo(m.batch)
	for i := len(b.undo) - 1; i >= m.undo; i-- {
		u := &b.undo[i]
		b.restore(u.i, u.val, u.live, u.lazy)
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
	if len(b.recs) < deferredIndexMin {
		// setDeferred indexes a record only from the
		// deferredIndexMin-th on, when it builds the index: one left
		// from before would miss the records deferred next.
		b.ix = nil
	}
	b.rollbackOrdered(m)
	return err
}

// QueueOrdered queues a write of key (see ordered): a SingleDelete if
// del, else a Set of an empty value.
func (b *txBatch) QueueOrdered(key []byte, del bool) {
	start := len(b.orderedKeys)
	b.orderedKeys = append(b.orderedKeys, key...)
	b.ordered = append(b.ordered, orderedWrite{start: start, end: len(b.orderedKeys), del: del})
	b.notePending(b.orderedKeys[start:])
}

func (b *txBatch) notePending(k []byte) {
	if b.pending == 0 || bytes.Compare(k, b.pendLo) < 0 {
		b.pendLo = k
	}
	if b.pending == 0 || bytes.Compare(k, b.pendHi) > 0 {
		b.pendHi = k
	}
	b.pending++
}

// pendingIn reports whether an ordered write not yet in the batch may
// fall in [lower, upper) (nil: unbounded).
func (b *txBatch) pendingIn(lower, upper []byte) bool {
	return b.pending > 0 && (upper == nil || bytes.Compare(b.pendLo, upper) < 0) &&
		(lower == nil || bytes.Compare(b.pendHi, lower) >= 0)
}

// writeOrdered puts the pending ordered writes in the batch, in key
// order; two writes of one key keep theirs.
func (b *txBatch) writeOrdered() error {
	if b.pending == 0 {
		return nil
	}
	idx := make([]int, 0, b.pending)
	for i := range b.ordered {
		if !b.ordered[i].written {
			idx = append(idx, i)
		}
	}
	b.pending, b.pendLo, b.pendHi = 0, nil, nil
	key := func(i int) []byte { return b.orderedKeys[b.ordered[i].start:b.ordered[i].end] }
	slices.SortStableFunc(idx, func(x, y int) int { return bytes.Compare(key(x), key(y)) })
	for _, i := range idx {
		w := &b.ordered[i]
		k := key(i)
		if b.checkOrdered != nil {
			if err := b.checkOrdered(k, w.del); err != nil {
				return err
			}
		}
		w.at, w.written = b.Batch.Mark(), true
		var err error
		if w.del {
			err = b.Batch.SingleDelete(k)
		} else {
			err = b.Batch.Set(k, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rollbackOrdered drops the ordered writes queued after m, and queues
// again those queued before m but written to the batch after it, which
// the batch's rollback discarded.
func (b *txBatch) rollbackOrdered(m txMark) {
	if len(b.ordered) == 0 {
		return
	}
	if m.ordered < len(b.ordered) {
		clear(b.ordered[m.ordered:])
		b.ordered = b.ordered[:m.ordered]
		end := 0
		if m.ordered > 0 {
			end = b.ordered[m.ordered-1].end
		}
		b.orderedKeys = b.orderedKeys[:end]
	}
	b.pending, b.pendLo, b.pendHi = 0, nil, nil
	for i := range b.ordered {
		w := &b.ordered[i]
		if w.written && !w.at.Before(m.batch) {
			w.written = false
		}
		if !w.written {
			b.notePending(b.orderedKeys[w.start:w.end])
		}
	}
}

// SetDeferred stores value under key at the latest when the batch is
// flushed; a later SetDeferred of the same key replaces it for free.
// Pebble would copy value; so does this.
func (b *txBatch) SetDeferred(key, value []byte) {
	b.setDeferred(key, b.copy(value), false)
}

// SetDeferredAppend is SetDeferred of a new entry record (records.go),
// returning the record's place, for deferredAt.
func (b *txBatch) SetDeferredAppend(key, value []byte) int {
	return b.setDeferred(key, b.copy(value), false)
}

// deferredAt returns the value of the record deferred at place i, if it
// is key's and deferred still. A place found stale (after a rollback, or
// a write of the record) is simply not key's.
func (b *txBatch) deferredAt(i int, key []byte) ([]byte, bool) {
	if i < 0 || i >= len(b.recs) {
		return nil, false
	}
	r := &b.recs[i]
	if !r.live || r.lazy || string(r.key) != string(key) {
		return nil, false
	}
	return r.val, true
}

// replaceDeferredAt gives the record deferred at place i the value v.
func (b *txBatch) replaceDeferredAt(i int, v []byte) {
	b.change(i, b.copy(v), true)
}

// extendDeferredAt appends suffix to the value of the record deferred at
// place i. The old value stays as it was, for a rollback; when it ends
// the arena, as a record extended append after append does, the new one
// grows in place instead of being copied whole.
func (b *txBatch) extendDeferredAt(i int, suffix []byte) {
	old := b.recs[i].val
	n := len(b.arena)
	var v []byte
	if len(old) > 0 && len(old) <= n && &b.arena[n-len(old)] == &old[0] && cap(b.arena)-n >= len(suffix) {
		b.arena = append(b.arena, suffix...)
		v = b.arena[n-len(old) : len(b.arena) : len(b.arena)]
	} else {
		v = b.copy2(old, suffix)
	}
	b.change(i, v, true)
}

// SetDeferredLazy is SetDeferred of a value made only when it is wanted
// (by a read, or when the batch is flushed) by encodeLazy, from what the
// transaction holds then. The caller guarantees that this is what it
// would have passed to SetDeferred: whatever changes the value's source
// calls SetDeferredLazy again, or writes, deletes or rolls back the key.
// A stream's metadata record, rewritten by every XADD of a group, is
// thus encoded once per group (Tx.save).
func (b *txBatch) SetDeferredLazy(key []byte) {
	b.setDeferred(key, nil, true)
}

// setDeferred defers the write of v under key and returns the record's
// place in recs.
func (b *txBatch) setDeferred(key, v []byte, lazy bool) int {
	if i := b.find(key); i >= 0 {
		r := &b.recs[i]
		b.undo = append(b.undo, deferredUndo{i: i, val: r.val, live: r.live, lazy: r.lazy})
		b.restore(i, v, true, lazy)
		return i
	}
	b.recs = append(b.recs, deferredRec{key: b.copy(key), val: v, live: true, lazy: lazy})
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
	return len(b.recs) - 1
}

// Set stores value under key now, voiding a deferred write of key.
func (b *txBatch) Set(key, value []byte) error {
	b.void(key)
	return b.Batch.Set(key, value)
}

// SetAppend stores value under key as Set does, leaving it out of the
// batch's index until the transaction reads where it lies (storage's
// Batch.SetAppend): for a new entry.
func (b *txBatch) SetAppend(key, value []byte) error {
	b.void(key)
	return b.Batch.SetAppend(key, value)
}

// Delete removes key, voiding a deferred write of key.
func (b *txBatch) Delete(key []byte) error {
	b.void(key)
	return b.Batch.Delete(key)
}

// DeleteRange removes every key in [lower, upper), voiding the deferred
// writes there.
func (b *txBatch) DeleteRange(lower, upper []byte) error {
	if b.pendingIn(lower, upper) {
		if err := b.writeOrdered(); err != nil {
			return err
		}
	}
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
	if b.pending > 0 && bytes.Compare(key, b.pendLo) >= 0 && bytes.Compare(key, b.pendHi) <= 0 {
		if err := b.writeOrdered(); err != nil {
			return nil, false, err
		}
	}
	if b.live > 0 {
		if i := b.find(key); i >= 0 && b.recs[i].live {
			if err := b.materialize(i); err != nil {
				return nil, false, err
			}
			return b.recs[i].val, true, nil
		}
	}
	return b.Batch.Get(key)
}

// NewIter iterates [lower, upper) through the batch, once the deferred
// writes in that range are in it. An iterator that widens its bounds
// later must have writeIn write those of its widest bounds first.
func (b *txBatch) NewIter(lower, upper []byte) (*storage.Iter, error) {
	if err := b.writeIn(lower, upper); err != nil {
		return nil, err
	}
	return b.Batch.NewIter(lower, upper)
}

// writeIn puts the deferred and ordered writes in [lower, upper) in the
// batch.
func (b *txBatch) writeIn(lower, upper []byte) error {
	if b.pendingIn(lower, upper) {
		if err := b.writeOrdered(); err != nil {
			return err
		}
	}
	if b.live > 0 {
		for i := range b.recs {
			if r := &b.recs[i]; r.live && inRange(r.key, lower, upper) {
				if err := b.write(i); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// flush writes every deferred record and every ordered write to the
// batch.
func (b *txBatch) flush() error {
	for i := 0; b.live > 0 && i < len(b.recs); i++ {
		if b.recs[i].live {
			if err := b.write(i); err != nil {
				return err
			}
		}
	}
	return b.writeOrdered()
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
	clear(b.ordered)
	b.ordered = b.ordered[:0]
	if cap(b.orderedKeys) > maxKeptBuf {
		b.orderedKeys = nil
	}
	b.orderedKeys = b.orderedKeys[:0]
	b.pending, b.pendLo, b.pendHi = 0, nil, nil
}

// write puts recs[i] in the batch; it is no longer deferred.
func (b *txBatch) write(i int) error {
	if err := b.materialize(i); err != nil {
		return err
	}
	r := &b.recs[i]
	// SetAppend keeps an entry record out of the batch's index, as
	// XADD's own writes are, and writes any other record as Set does.
	if err := b.Batch.SetAppend(r.key, r.val); err != nil {
		return err
	}
	b.change(i, r.val, false)
	return nil
}

// materializeKey gives the lazy record of key, if there is one, its
// value now, while what it is encoded from still stands for it.
func (b *txBatch) materializeKey(key []byte) error {
	if b.live == 0 {
		return nil
	}
	if i := b.find(key); i >= 0 && b.recs[i].live {
		return b.materialize(i)
	}
	return nil
}

// materialize gives a lazy recs[i] its value. It logs nothing: the value
// is what the record stood for, and a rollback that changes the source
// also restores the record to what it was.
func (b *txBatch) materialize(i int) error {
	r := &b.recs[i]
	if !r.lazy {
		return nil
	}
	v, err := b.encodeLazy(r.key, b.lazyBuf[:0])
	if err != nil {
		return err
	}
	b.lazyBuf = v
	r.val, r.lazy = b.copy(v), false
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
	b.undo = append(b.undo, deferredUndo{i: i, val: r.val, live: r.live, lazy: r.lazy})
	b.restore(i, val, live, false)
}

// restore sets recs[i] without logging, keeping live counted.
func (b *txBatch) restore(i int, val []byte, live, lazy bool) {
	r := &b.recs[i]
	if r.live != live {
		if live {
			b.live++
		} else {
			b.live--
		}
	}
	r.val, r.live, r.lazy = val, live, lazy
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

// copy2 is copy of p then q, as one slice.
func (b *txBatch) copy2(p, q []byte) []byte {
	if cap(b.arena)-len(b.arena) < len(p)+len(q) {
		b.arena = make([]byte, 0, max(2*cap(b.arena), len(p)+len(q), 4096))
	}
	n := len(b.arena)
	b.arena = append(append(b.arena, p...), q...)
	return b.arena[n:len(b.arena):len(b.arena)]
}

// inRange reports whether lower <= key < upper (nil bounds are open).
func inRange(key, lower, upper []byte) bool {
	return (lower == nil || bytes.Compare(key, lower) >= 0) && (upper == nil || bytes.Compare(key, upper) < 0)
}
