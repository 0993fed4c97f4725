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
// (storage.BenchmarkEntriesPerRecord; bench/results/HISTORY.md, "Tried
// on 2026-12-02 after 16:45").
//
// What changes for a reader of a packed stream: the entry with a given ID
// may sit in a record keyed before it, so a point read, or a forward scan
// from an ID, seeks the last record keyed at or before that ID, and every
// scan filters the entries of the records at its ends. Deleting one entry
// rewrites its record without it. XADD packs the entries one transaction
// (a group commit) appends to a stream (addEntry).

// A packed record holds at most recordMaxEntries entries in at most
// recordMaxBytes (a larger entry has a record of its own): XRANGE COUNT
// 10 then decodes at most a record or two beyond what it returns. The
// cost per record that packing saves has mostly gone by 16 entries
// (BenchmarkEntriesPerRecord: most of the saving is reached at 16, little
// more at 64), and XADD -P 16 did as well with 64 to a record as with 16
// (bench/results/HISTORY.md, "Tried on 2026-12-02 after 16:45").
const (
	recordMaxEntries = 16
	recordMaxBytes   = 2048
)

// addEntry writes entry id of s, whose value is v: into the record the
// transaction last deferred for s, while it is deferred still, lies in
// the tail node and has room; else as a record of its own, deferred, that
// the stream's next entries in this transaction may join. A record of
// more than one entry marks the stream packed.
//
// What the record holds is carried from one command to the next with the
// stream's staged metadata (keyMeta), which a rollback restores with the
// record's deferred value; a read of the stream's entries writes the
// record to the batch, and the next entry starts another. Appending to
// the record costs the new entry's bytes, not a rewrite of the record
// (txBatch.extendDeferredAt).
func (tx *Tx) addEntry(s *streamRef, id ID, v []byte) error {
	if s.recN > 0 && s.recN < recordMaxEntries && !s.rec.Less(s.sm.Tail) {
		tx.rkey = s.appendEntryKey(tx.rkey[:0], s.rec)
		if old, ok := tx.b.deferredAt(s.recIdx, tx.rkey); ok {
			if s.recN == 1 {
				// The first entry's value is an Entry: the record becomes
				// a Record of both.
				tx.rval = storage.AppendRecordStart(tx.rval[:0])
				tx.rval = storage.AppendRecordEntry(tx.rval, s.rec.Ms, s.rec.Seq, s.rec.Ms, s.rec.Seq, old)
				tx.rval = storage.AppendRecordEntry(tx.rval, s.rec.Ms, s.rec.Seq, id.Ms, id.Seq, v)
				if len(tx.rval) <= recordMaxBytes {
					tx.b.replaceDeferredAt(s.recIdx, tx.rval)
					s.recLast, s.recN, s.sm.Packed = id, 2, 1
					return nil
				}
			} else {
				tx.rval = storage.AppendRecordEntry(tx.rval[:0], s.recLast.Ms, s.recLast.Seq, id.Ms, id.Seq, v)
				if len(old)+len(tx.rval) <= recordMaxBytes {
					tx.b.extendDeferredAt(s.recIdx, tx.rval)
					s.recLast, s.recN = id, s.recN+1
					return nil
				}
			}
		}
	}
	tx.rkey = s.appendEntryKey(tx.rkey[:0], id)
	s.recIdx = tx.b.SetDeferredAppend(tx.rkey, v)
	s.rec, s.recLast, s.recN = id, id, 1
	return nil
}

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
	return tx.putRecord(f.key, kept)
}

// putRecord writes the record keyed key to hold es, or deletes it if es
// is empty.
func (tx *Tx) putRecord(key []byte, es []recEntry) error {
	if len(es) == 0 {
		return tx.b.Delete(key)
	}
	ms, seq, err := storage.DecodeIDSuffix(key)
	if err != nil {
		return err
	}
	tx.vbuf = appendRecord(tx.vbuf[:0], ID{ms, seq}, es)
	return tx.b.Set(key, tx.vbuf)
}
