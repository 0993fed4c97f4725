package storage

import "github.com/cockroachdb/pebble/v2"

// IterCache lends one iterator over the committed state, again and again,
// for as long as no batch has been applied since it was opened. Building
// a Pebble iterator (one per level and memtable, merged) and closing it
// cost more than the short range read it serves (a large share of
// XRANGE COUNT 10's time: bench/results/HISTORY.md, "Requests, reads and
// group commits, on one thread"), and positioning a kept iterator
// again finds its tables open and its blocks loaded. A write makes the
// iterator stale; the next NewIter opens a fresh one.
//
// An IterCache belongs to one goroutine. The iterator it keeps pins what
// it reads (memtables, tables), so its owner calls ReleaseStale when it
// has time, and Release before the store closes.
type IterCache struct {
	db   *DB
	it   *pebble.Iterator
	at   uint64 // db.applied when it was opened
	lent bool   // iter is out: another NewIter opens an iterator of its own
	iter Iter
	// opened counts the iterators it opened to keep (Pebble reuses
	// their memory, so the pointer does not tell).
	opened int
}

// NewIterCache returns an empty IterCache over db.
func (db *DB) NewIterCache() *IterCache { return &IterCache{db: db} }

// Get reads key from the committed state.
func (c *IterCache) Get(key []byte) ([]byte, bool, error) { return c.db.Get(key) }

// NewIter is DB.NewIter, lending the kept iterator when it is current
// and not already lent. Closing what it lends returns it.
func (c *IterCache) NewIter(lower, upper []byte) (*Iter, error) {
	if c.lent {
		return c.db.NewIter(lower, upper)
	}
	if err := c.ReleaseStale(); err != nil {
		return nil, err
	}
	if c.it == nil {
		// Read before opening: a batch applied in between makes the
		// iterator look stale, never current when it is not.
		at := c.db.applied.Load()
		it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return nil, err
		}
		c.it, c.at = it, at
		c.opened++
	} else {
		c.it.SetBounds(lower, upper)
	}
	c.lent = true
	c.iter = Iter{it: c.it, cache: c}
	return &c.iter, nil
}

// ReleaseStale closes the kept iterator if a batch was applied since it
// was opened.
func (c *IterCache) ReleaseStale() error {
	if c.it == nil || c.lent || c.at == c.db.applied.Load() {
		return nil
	}
	return c.Release()
}

// Release closes the kept iterator, unless it is lent.
func (c *IterCache) Release() error {
	if c.it == nil || c.lent {
		return nil
	}
	it := c.it
	c.it = nil
	return it.Close()
}
