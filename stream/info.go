package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// XSetID sets the last ID (and optionally entries-added and
// max-deleted-entry-id), with the checks of Redis 7.0 in its order. A
// missing key is ErrNoSuchKey.
func (tx *Tx) XSetID(db int, key []byte, a XSetIDArgs) error {
	if a.MaxDeleted != nil && a.ID.Less(*a.MaxDeleted) {
		return ErrMaxDeletedGreater
	}
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoSuchKey
	}
	if s.sm.Length > 0 {
		last, _, err := tx.edgeEntry(s, true)
		if err != nil {
			return err
		}
		if a.ID.Less(last.ID) {
			return ErrSetIDSmaller
		}
		if a.EntriesAdded != -1 && s.sm.Length > uint64(a.EntriesAdded) {
			return ErrEntriesAddedSmaller
		}
	}
	s.sm.Last = a.ID
	if a.EntriesAdded != -1 {
		s.sm.EntriesAdded = uint64(a.EntriesAdded)
	}
	if a.MaxDeleted != nil && !a.MaxDeleted.IsZero() {
		s.sm.MaxDeleted = *a.MaxDeleted
	}
	// Redis 7.0's XSETID does not signal the key as modified: a WATCH on
	// it survives, so no change is noted.
	return tx.save(s)
}

// XInfo reports on the stream; full selects XINFO STREAM FULL with at
// most count entries (count 0: all). A missing key is ErrNoSuchKey.
func (tx *Tx) XInfo(db int, key []byte, full bool, count int64) (*Info, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoSuchKey
	}
	in := &Info{
		Length:        s.sm.Length,
		RadixTreeKeys: s.sm.Nodes,
		LastGenerated: s.sm.Last,
		MaxDeleted:    s.sm.MaxDeleted,
		EntriesAdded:  s.sm.EntriesAdded,
		RecordedFirst: s.sm.First,
		Groups:        s.sm.Groups,
	}
	if in.RadixTreeNodes, err = tx.raxNodes(s); err != nil {
		return nil, err
	}
	if full {
		if count <= 0 {
			count = -1
		}
		if in.Entries, err = tx.scanEntries(s, ID{}, MaxID, count, false); err != nil {
			return nil, err
		}
		in.GroupDetails, err = tx.groupsFull(s, count)
		return in, err
	}
	if s.sm.Length > 0 {
		first, _, err := tx.edgeEntry(s, false)
		if err != nil {
			return nil, err
		}
		last, _, err := tx.edgeEntry(s, true)
		if err != nil {
			return nil, err
		}
		in.First, in.Last = &first, &last
	}
	return in, nil
}

// raxNodes computes radix-tree-nodes from the node model's keys.
func (tx *Tx) raxNodes(s *streamRef) (uint64, error) {
	lower, upper := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindNode)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return 0, err
	}
	var keys [][16]byte
	for ok := it.First(); ok; ok = it.Next() {
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			it.Close()
			return 0, err
		}
		keys = append(keys, RaxKey(ID{ms, seq}))
	}
	if err := it.Close(); err != nil {
		return 0, err
	}
	return RaxNodes(keys), nil
}
