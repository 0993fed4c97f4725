package storage

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
)

// Batch is an atomic group of writes. Reads through a Batch see the batch's
// own writes over the committed state.
//
// A stream's new entries are written with SetAppend, into a second,
// unindexed Pebble batch (appends): a transaction rarely reads back the
// entries it appends, and indexing each one in the batch's skiplist was
// an eighth of the stream engine's time for a group of XADDs
// (BenchmarkXAddBatched). The appends reach the indexed batch (merge)
// only when the transaction reads, deletes or writes where they lie
// (between the smallest and largest appended key, lo and hi), so every
// read sees them and every later write of the same key is ordered after
// them. Apply commits the indexed batch's records followed by the appends
// not merged, which is their order: no write to the indexed batch after
// a merge touches an appended key (it would have merged first).
//
// appends keeps every append of the transaction, merged or not (merged
// counts those already copied into b), so that RollbackTo can return to
// a mark taken before a merge: the indexed batch is cut back to the mark,
// which drops the merged copies, and the appends are cut back to the
// mark's, the merged point with them.
type Batch struct {
	db *DB
	b  *pebble.Batch

	appends *pebble.Batch // nil until indexedAppends appends were indexed
	indexed int           // appends indexed as Sets, up to indexedAppends
	merged  int           // bytes of appends' records (after the header) copied into b
	mergedN uint32        // how many records those are
	lo, hi  []byte        // smallest and largest key of the appends not merged
	// Room for lo and hi: a Batch is made per transaction, and an entry
	// key is 32 bytes and the stream's name.
	loBuf, hiBuf [96]byte
}

// NewBatch returns an empty indexed batch.
func (db *DB) NewBatch() *Batch {
	return &Batch{db: db, b: db.pdb.NewIndexedBatch()}
}

// indexedAppends is how many appends a transaction indexes as Sets before
// it keeps the rest apart: the second batch and the copies that Apply
// makes of both cost more than indexing a few: with every append kept
// apart, unpipelined XADD (groups of a few) was slower than before while
// XADD -P 16 gained (bench/results/HISTORY.md, "Figures that stood in
// code comments").
const indexedAppends = 8

// SetAppend stores value under key, as Set, without indexing it until
// the transaction reads or writes where it lies (XADD's new entry). Only
// entry keys (keys.go) are kept apart, and only after the transaction's
// first indexedAppends; any other key is written as Set writes it.
func (b *Batch) SetAppend(key, value []byte) error {
	if !entryKey(key) {
		return b.Set(key, value)
	}
	if b.appends == nil && b.indexed < indexedAppends {
		b.indexed++
		return b.b.Set(key, value, nil)
	}
	if b.appends == nil {
		b.appends = b.db.pdb.NewBatch()
	}
	if err := b.appends.Set(key, value, nil); err != nil {
		return err
	}
	b.noteAppend(key, b.appends.Count()-b.mergedN == 1)
	return nil
}

// unmerged reports whether appends holds records not merged.
func (b *Batch) unmerged() bool {
	return b.appends != nil && b.appends.Count() > b.mergedN
}

// noteAppend widens lo and hi to key, an append not merged, the first
// one if first.
func (b *Batch) noteAppend(key []byte, first bool) {
	switch {
	case first:
		b.lo = append(b.loBuf[:0], key...)
		b.hi = append(b.hiBuf[:0], key...)
	case bytes.Compare(key, b.hi) > 0:
		b.hi = append(b.hi[:0], key...)
	case bytes.Compare(key, b.lo) < 0:
		b.lo = append(b.lo[:0], key...)
	}
}

// pointTouches reports whether key may be one of the appends not merged:
// only entry keys are appended, so a stream's other records, which sort
// among its entries or between two streams' entries, never merge them.
func (b *Batch) pointTouches(key []byte) bool {
	return b.unmerged() && bytes.Compare(key, b.lo) >= 0 && bytes.Compare(key, b.hi) <= 0 && entryKey(key)
}

// rangeTouches reports whether [lower, upper) may hold appends not
// merged; nil bounds are open.
func (b *Batch) rangeTouches(lower, upper []byte) bool {
	return b.unmerged() && (upper == nil || bytes.Compare(b.lo, upper) < 0) &&
		(lower == nil || bytes.Compare(b.hi, lower) >= 0)
}

// mergeIf merges the appends not merged if touches, so that what comes
// next reads them, or is ordered after them.
func (b *Batch) mergeIf(touches bool) error {
	if !touches {
		return nil
	}
	return b.merge()
}

// applyUnmerged copies the appends not merged into dst, after what it
// holds.
func (b *Batch) applyUnmerged(dst *pebble.Batch) error {
	if b.merged == 0 {
		return dst.Apply(b.appends, nil)
	}
	tail, err := b.db.batchOf(b.appends.Repr()[batchrepr.HeaderLen+b.merged:], b.appends.Count()-b.mergedN)
	if err != nil {
		return err
	}
	defer tail.Close()
	return dst.Apply(tail, nil)
}

// batchOf returns a new unindexed batch holding a copy of records, count
// records of a batch representation (without its header).
func (db *DB) batchOf(records []byte, count uint32) (*pebble.Batch, error) {
	// SetRepr keeps the slice, and the batch may reuse it once closed:
	// a copy of its own.
	buf := make([]byte, batchrepr.HeaderLen, batchrepr.HeaderLen+len(records))
	buf = append(buf, records...)
	batchrepr.SetCount(buf, count)
	nb := db.pdb.NewBatch()
	if err := nb.SetRepr(buf); err != nil {
		nb.Close()
		return nil, err
	}
	return nb, nil
}

// merge copies the appends not merged into the indexed batch.
func (b *Batch) merge() error {
	if !b.unmerged() {
		return nil
	}
	if err := b.applyUnmerged(b.b); err != nil {
		return err
	}
	b.merged = len(b.appends.Repr()) - batchrepr.HeaderLen
	b.mergedN = b.appends.Count()
	return nil
}

// Set stores value under key.
func (b *Batch) Set(key, value []byte) error {
	if err := b.mergeIf(b.pointTouches(key)); err != nil {
		return err
	}
	return b.b.Set(key, value, nil)
}

// Delete removes key.
func (b *Batch) Delete(key []byte) error {
	if err := b.mergeIf(b.pointTouches(key)); err != nil {
		return err
	}
	return b.b.Delete(key, nil)
}

// SingleDelete removes key, which the caller guarantees was Set at most
// once since it was last deleted (by Delete, SingleDelete or
// DeleteRange). Unlike Delete's tombstone, which a compaction carries
// down until it reaches the bottom level, it vanishes with the Set it
// meets, usually in the memtable flush: a record written and removed soon
// after costs no compaction work. Had the key been Set twice, a
// compaction could drop the newer Set and leave the older one visible
// again (Pebble's Writer.SingleDelete).
func (b *Batch) SingleDelete(key []byte) error {
	if err := b.mergeIf(b.pointTouches(key)); err != nil {
		return err
	}
	return b.b.SingleDelete(key, nil)
}

// DeleteRange removes every key in [lower, upper).
func (b *Batch) DeleteRange(lower, upper []byte) error {
	if err := b.mergeIf(b.rangeTouches(lower, upper)); err != nil {
		return err
	}
	return b.b.DeleteRange(lower, upper, nil)
}

// Get reads key through the batch.
func (b *Batch) Get(key []byte) ([]byte, bool, error) {
	if err := b.mergeIf(b.pointTouches(key)); err != nil {
		return nil, false, err
	}
	return get(b.b, key)
}

// NewIter iterates [lower, upper) through the batch.
func (b *Batch) NewIter(lower, upper []byte) (*Iter, error) {
	if err := b.mergeIf(b.rangeTouches(lower, upper)); err != nil {
		return nil, err
	}
	it, err := b.b.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// unmergedLen is the size of the appends not merged, in bytes of
// records.
func (b *Batch) unmergedLen() int {
	if !b.unmerged() {
		return 0
	}
	return len(b.appends.Repr()) - batchrepr.HeaderLen - b.merged
}

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.b.Empty() && !b.unmerged() }

// Len is the size of the batch in bytes.
func (b *Batch) Len() int { return b.b.Len() + b.unmergedLen() }

// Count is the number of writes in the batch.
func (b *Batch) Count() uint32 {
	n := b.b.Count()
	if b.unmerged() {
		n += b.appends.Count() - b.mergedN
	}
	return n
}

// Mark is a point in a batch's writes that RollbackTo can return to.
// Two marks of one batch are equal when no write came between them.
type Mark struct {
	size  int    // bytes of the indexed batch's representation
	count uint32 // its writes
	// The appends: their representation's size and count, and how many
	// of them were merged.
	asize   int
	acount  uint32
	merged  int
	mergedN uint32
}

// Mark returns the batch's current point.
func (b *Batch) Mark() Mark {
	m := Mark{size: b.b.Len(), count: b.b.Count(), merged: b.merged, mergedN: b.mergedN}
	if b.appends != nil {
		m.asize, m.acount = b.appends.Len(), b.appends.Count()
	}
	return m
}

// Before reports whether m is an earlier point of the indexed batch
// than o: a write to it made at m was made before o.
func (m Mark) Before(o Mark) bool { return m.size < o.size }

// RollbackTo discards every write made after m, a mark of this batch.
// Iterators opened on the batch must be closed first. An indexed Pebble
// batch cannot be truncated, so the writes before m are copied into a
// new one: the cost is that of the batch so far, paid only when there is
// something to discard.
func (b *Batch) RollbackTo(m Mark) error {
	if b.Mark() == m {
		return nil
	}
	if b.b.Len() != m.size {
		nb, err := b.prefix(b.b, m.size, m.count, true)
		if err != nil {
			return err
		}
		b.b.Close()
		b.b = nb
	}
	if b.appends != nil && b.appends.Len() != m.asize {
		na, err := b.prefix(b.appends, m.asize, m.acount, false)
		if err != nil {
			return err
		}
		b.appends.Close()
		b.appends = na
	}
	b.merged, b.mergedN = m.merged, m.mergedN
	return b.noteUnmerged()
}

// prefix returns a new batch holding the first count records (size
// bytes of representation) of pb, indexed or not.
func (b *Batch) prefix(pb *pebble.Batch, size int, count uint32, indexed bool) (*pebble.Batch, error) {
	if count == 0 {
		if indexed {
			return b.db.pdb.NewIndexedBatch(), nil
		}
		return b.db.pdb.NewBatch(), nil
	}
	p, err := b.db.batchOf(pb.Repr()[batchrepr.HeaderLen:size], count)
	if err != nil || !indexed {
		return p, err
	}
	nb := b.db.pdb.NewIndexedBatch()
	err = nb.Apply(p, nil)
	p.Close()
	if err != nil {
		nb.Close()
		return nil, err
	}
	return nb, nil
}

// noteUnmerged sets lo and hi from the appends past merged, after a
// rollback.
func (b *Batch) noteUnmerged() error {
	if !b.unmerged() {
		return nil
	}
	r := batchrepr.Reader(b.appends.Repr()[batchrepr.HeaderLen+b.merged:])
	for first := true; ; first = false {
		_, key, _, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		b.noteAppend(key, first)
	}
}

// seal makes the indexed batch hold every write, in order, for Apply and
// Repr: its records, then the appends not merged, in a batch without an
// index (the copy costs less than indexing them).
func (b *Batch) seal() error {
	if !b.unmerged() {
		return nil
	}
	all := b.db.pdb.NewBatch()
	err := all.Apply(b.b, nil)
	if err == nil {
		err = b.applyUnmerged(all)
	}
	if err != nil {
		all.Close()
		return err
	}
	b.b.Close()
	b.b = all
	b.appends.Close()
	b.appends, b.merged, b.mergedN = nil, 0, 0
	return nil
}

// Close releases the batch without committing it.
func (b *Batch) Close() error {
	if b.appends != nil {
		b.appends.Close()
		b.appends = nil
	}
	return b.b.Close()
}

// Commit applies the batch and makes it durable as the sync mode says:
// with SyncAlways it returns only once the batch is on disk. The batch is
// released either way.
func (b *Batch) Commit() error {
	defer b.Close()
	if err := b.seal(); err != nil {
		return err
	}
	if b.b.Empty() {
		return nil
	}
	if err := b.db.apply(b.b); err != nil {
		return err
	}
	return b.db.afterApply(1)
}

// Apply applies the batch without waiting for durability; the caller must
// call WaitDurable before acknowledging the write. It lets a caller release
// its locks between the two steps so that concurrent writers share a sync.
func (b *Batch) Apply() error {
	if err := b.seal(); err != nil {
		return err
	}
	if b.b.Empty() {
		return nil
	}
	return b.db.apply(b.b)
}
