package storage

import "github.com/cockroachdb/pebble/v2"

// Snapshot is a consistent, read-only view of the whole store at one
// point in time: reads through it see neither later batches nor later
// garbage collection. Close it when done: it pins the data it can see.
type Snapshot struct{ s *pebble.Snapshot }

// NewSnapshot returns a view of the store as it is now. The caller makes
// "now" meaningful: taken while no batch is being applied, the view holds
// whole batches only (a replica's full sync); a View that takes one while
// a batch is being applied sees it whole or not at all.
func (db *DB) NewSnapshot() *Snapshot { return &Snapshot{db.pdb.NewSnapshot()} }

// Get returns the value of key as of the snapshot; ok is false if absent.
func (s *Snapshot) Get(key []byte) (value []byte, ok bool, err error) { return get(s.s, key) }

// NewIter returns an iterator over [lower, upper) as of the snapshot.
func (s *Snapshot) NewIter(lower, upper []byte) (*Iter, error) {
	it, err := s.s.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }
