package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// Entry records
//
// A stream's entries are stored one to a record, keyed by the entry's ID.
// In a packed stream (streamMeta.Packed) a record may instead hold
// several entries (storage's Record value), keyed by an ID at or before
// its first entry's, and never entries of two nodes, so that a node's
// entries are still the records keyed in [master, last] and a whole node
// goes with one range deletion. Packing saves Pebble a key per entry
// (storage.BenchmarkEntriesPerRecord; README, "Tried on 2026-12-02 after
// 16:45").
//
// What changes for a reader of a packed stream: the entry with a given ID
// may sit in a record keyed before it, so a point read, or a forward scan
// from an ID, seeks the last record keyed at or before that ID, and every
// scan filters the entries of the records at its ends. Deleting one entry
// rewrites its record without it. Nothing writes packed records yet but
// the tests (records_test.go): the readers come first, so that a store
// written by the packing writer to come stays readable.

// recEntry is one entry of a record: its ID and its value (an Entry).
type recEntry struct {
	id ID
	v  []byte
}

// appendRecordEntries appends the entries of the record k, v to dst, in
// ID order. Their values alias v.
func appendRecordEntries(dst []recEntry, k, v []byte) ([]recEntry, error) {
	ms, seq, err := storage.DecodeIDSuffix(k)
	if err != nil {
		return dst, err
	}
	if !storage.IsEntryRecord(v) {
		return append(dst, recEntry{ID{ms, seq}, v}), nil
	}
	r, err := storage.NewRecordEntries(ms, seq, v)
	if err != nil {
		return dst, err
	}
	for {
		ms, seq, e, ok, err := r.Next()
		if err != nil {
			return dst, err
		}
		if !ok {
			return dst, nil
		}
		dst = append(dst, recEntry{ID{ms, seq}, e})
	}
}

// appendRecord appends the value of a record keyed key holding es (in ID
// order, none below key): an Entry for one entry keyed by its own ID, a
// Record otherwise.
func appendRecord(dst []byte, key ID, es []recEntry) []byte {
	if len(es) == 1 && es[0].id == key {
		return append(dst, es[0].v...)
	}
	dst = storage.AppendRecordStart(dst)
	prev := key
	for _, e := range es {
		dst = storage.AppendRecordEntry(dst, prev.Ms, prev.Seq, e.id.Ms, e.id.Seq, e.v)
		prev = e.id
	}
	return dst
}

// foundEntry is an entry looked up by ID, with the record holding it.
type foundEntry struct {
	v          []byte // the entry's value
	key, value []byte // its record's
}

// findEntry looks up entry id. The returned slices are valid until the
// transaction's next write.
func (tx *Tx) findEntry(s *streamRef, id ID) (foundEntry, bool, error) {
	if s.sm.Packed == 0 {
		k := s.entryKey(id)
		v, ok, err := tx.r.Get(k)
		if err != nil || !ok {
			return foundEntry{}, false, err
		}
		return foundEntry{v: v, key: k, value: v}, true, nil
	}
	lower, upper := s.entryBounds(ID{}, id)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return foundEntry{}, false, err
	}
	defer it.Close()
	if !it.Last() {
		return foundEntry{}, false, nil
	}
	// The iterator's memory lives until it moves or closes.
	k := append([]byte(nil), it.Key()...)
	v := append([]byte(nil), it.Value()...)
	es, err := appendRecordEntries(tx.recs[:0], k, v)
	tx.recs = es
	if err != nil {
		return foundEntry{}, false, err
	}
	for _, e := range es {
		if e.id == id {
			return foundEntry{v: e.v, key: k, value: v}, true, nil
		}
	}
	return foundEntry{}, false, nil
}

// deleteFound deletes the entry f, rewriting its record without it.
func (tx *Tx) deleteFound(f foundEntry, id ID) error {
	if !storage.IsEntryRecord(f.value) {
		return tx.b.Delete(f.key)
	}
	ms, seq, err := storage.DecodeIDSuffix(f.key)
	if err != nil {
		return err
	}
	es, err := appendRecordEntries(nil, f.key, f.value)
	if err != nil {
		return err
	}
	kept := es[:0]
	for _, e := range es {
		if e.id != id {
			kept = append(kept, e)
		}
	}
	return tx.putRecord(f.key, ID{ms, seq}, kept)
}

// putRecord writes the record keyed key (whose ID is keyID) to hold es,
// or deletes it if es is empty.
func (tx *Tx) putRecord(key []byte, keyID ID, es []recEntry) error {
	if len(es) == 0 {
		return tx.b.Delete(key)
	}
	tx.vbuf = appendRecord(tx.vbuf[:0], keyID, es)
	return tx.b.Set(key, tx.vbuf)
}
