package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// The key index: per database, a count of the keys and of the keys with
// a TTL (DBSIZE and INFO keyspace in O(1)), and the scan index that
// orders keys by hash for SCAN (scan.go). putMeta and dropKey are the
// only writers of metadata records and keep both exact in the same
// batch; FlushDB and FlushAll reset them wholesale.
//
// A count is of metadata records, so a key whose TTL has passed counts
// until it is reclaimed (lazily by a write transaction, or by
// ExpireCycle): Redis's DBSIZE and INFO keyspace count the same way.
//
// The committed counts live in Engine.counts. A transaction accumulates
// its changes in Tx.deltas; Update writes the resulting totals into the
// batch and adds the deltas to Engine.counts only once the batch is
// applied, so a failed or rolled-back transaction leaves them untouched.

// keyCounts are the keys of one database and how many have an expiry.
type keyCounts struct {
	keys, expires int64
}

// buildBatchKeys is how many keys one batch of buildKeyIndex covers.
const buildBatchKeys = 10000

// hasTTL is 1 if m carries an expiry, else 0.
func hasTTL(m *storage.Meta) int64 {
	if m.ExpireAt != 0 {
		return 1
	}
	return 0
}

// scanKey returns key's scan index record key.
func (tx *Tx) scanKey(db int, key []byte) []byte {
	return storage.AppendScanKey(nil, db, tx.e.opts.scanHash(key), key)
}

// count records that db gained keys keys and expires keys with a TTL
// (either may be negative).
func (tx *Tx) count(db int, keys, expires int64) {
	if keys == 0 && expires == 0 {
		return
	}
	if tx.deltas == nil {
		tx.deltas = make(map[int]keyCounts)
	}
	d, had := tx.deltas[db]
	tx.undo = append(tx.undo, undoRec{kind: undoDelta, db: db, d: d, had: had})
	d.keys += keys
	d.expires += expires
	tx.deltas[db] = d
}

// keyCounts returns db's counts as this transaction sees them: committed
// plus its own changes.
func (tx *Tx) keyCounts(db int) keyCounts {
	c, d := tx.e.counts[db], tx.deltas[db]
	return keyCounts{keys: c.keys + d.keys, expires: c.expires + d.expires}
}

// resetCounts brings db's counts to zero (FLUSHDB, FLUSHALL).
func (tx *Tx) resetCounts(db int) {
	c := tx.keyCounts(db)
	tx.count(db, -c.keys, -c.expires)
}

// writeCounts puts the new totals of every database the transaction
// changed into its batch. Update calls it after the transaction's
// function, with Engine.mu held.
func (tx *Tx) writeCounts() error {
	for db, d := range tx.deltas {
		if d == (keyCounts{}) {
			continue
		}
		c := tx.keyCounts(db)
		if err := tx.b.Set(storage.KeyCountsKey(db), storage.AppendKeyCounts(nil, uint64(c.keys), uint64(c.expires))); err != nil {
			return err
		}
	}
	return nil
}

// applyCounts adds the transaction's deltas to Engine.counts once its
// batch is applied. Engine.mu must be held exclusively.
func (tx *Tx) applyCounts() {
	for db := range tx.deltas {
		c := tx.keyCounts(db)
		if c == (keyCounts{}) {
			delete(tx.e.counts, db)
		} else {
			tx.e.counts[db] = c
		}
	}
}

// loadKeyIndex reads the key counts at Open, building the counts and the
// scan index first if the store predates them.
func (e *Engine) loadKeyIndex() error {
	_, built, err := e.db.Get(storage.KeyIndexKey())
	if err != nil {
		return err
	}
	if !built {
		return e.buildKeyIndex()
	}
	e.counts = make(map[int]keyCounts)
	lo, hi := storage.KeyCountsBounds()
	it, err := e.db.NewIter(lo, hi)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		db, err := storage.DecodeKeyCountsKey(it.Key())
		if err != nil {
			it.Close()
			return err
		}
		keys, expires, err := storage.DecodeKeyCounts(it.Value())
		if err != nil {
			it.Close()
			return err
		}
		if keys != 0 || expires != 0 {
			e.counts[db] = keyCounts{keys: int64(keys), expires: int64(expires)}
		}
	}
	return it.Close()
}

// buildKeyIndex walks every metadata record once, writing its scan index
// entry and counting it, for a store written before the key index
// existed (on a new store the walk is empty). The metadata records sit
// among the data (storage/keys.go), so the walk reads the data too; it
// runs once per store. The entries go out in
// batches; the counts and the marker saying the index is complete go in
// the last one, so an interrupted build is simply done again.
func (e *Engine) buildKeyIndex() error {
	counts := make(map[int]keyCounts)
	lo, hi := storage.AllData()
	it, err := e.db.NewIter(lo, hi)
	if err != nil {
		return err
	}
	b := e.db.NewBatch()
	total, inBatch := 0, 0
	fail := func(err error) error {
		it.Close()
		b.Close()
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		db, key, err := storage.DecodeMetaKey(it.Key())
		if err != nil {
			continue // a data record
		}
		m, err := storage.DecodeMeta(it.Value())
		if err != nil {
			return fail(err)
		}
		c := counts[db]
		c.keys++
		c.expires += hasTTL(&m)
		counts[db] = c
		if err := b.Set(storage.AppendScanKey(nil, db, e.opts.scanHash(key), key), nil); err != nil {
			return fail(err)
		}
		total++
		if inBatch++; inBatch == buildBatchKeys {
			if err := b.Commit(); err != nil {
				it.Close()
				return err
			}
			b, inBatch = e.db.NewBatch(), 0
		}
	}
	if err := it.Close(); err != nil {
		b.Close()
		return err
	}
	for db, c := range counts {
		if err := b.Set(storage.KeyCountsKey(db), storage.AppendKeyCounts(nil, uint64(c.keys), uint64(c.expires))); err != nil {
			b.Close()
			return err
		}
	}
	if err := b.Set(storage.KeyIndexKey(), []byte("1")); err != nil {
		b.Close()
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	if total > 0 {
		e.opts.Logger.Info("built the key index of a store written by an earlier version", "keys", total)
	}
	e.counts = counts
	return nil
}
