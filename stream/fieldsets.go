package stream

import "github.com/eddy-streams/eddy/storage"

// Field sets
//
// Most streams add entries with the same field names over and over; Redis
// stores those names once per listpack node (the "same fields" flag). Eddy
// records each distinct list of field names once per stream, as a field
// set with a small id, and an entry whose names equal a recorded set stores
// only its values and the id (storage/values.go). A stream keeps at most
// maxFieldSets sets: entries with other names store their names, so a
// stream whose names never repeat costs one lookup per XADD and nothing
// more.

// maxFieldSets bounds the field sets of one stream.
const maxFieldSets = 16

// fieldSets are a stream's recorded field sets; set id i is names[i-1].
// A fieldSets value is never modified once built: adding a set makes a new
// one, so the metadata cache may hand the same value to every reader.
type fieldSets struct {
	names [][][]byte
}

// FieldSet implements storage.FieldSets.
func (f *fieldSets) FieldSet(id uint64) ([][]byte, error) {
	if f == nil || id == 0 || id > uint64(len(f.names)) {
		return nil, storage.ErrCorrupt
	}
	return f.names[id-1], nil
}

// fieldSets returns the stream's field sets, reading them on first use.
func (tx *Tx) fieldSets(s *streamRef) (*fieldSets, error) {
	if s.sets != nil || s.sm.FieldSets == 0 {
		return s.sets, nil
	}
	lower, upper := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindFieldSet)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	f := &fieldSets{names: make([][][]byte, 0, s.sm.FieldSets)}
	for ok := it.First(); ok; ok = it.Next() {
		id, err := storage.DecodeFieldSetKey(it.Key())
		if err != nil || id != uint64(len(f.names))+1 {
			it.Close()
			return nil, storage.ErrCorrupt
		}
		names, err := storage.DecodeFieldSet(it.Value())
		if err != nil {
			it.Close()
			return nil, err
		}
		f.names = append(f.names, names)
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	if uint64(len(f.names)) != s.sm.FieldSets {
		return nil, storage.ErrCorrupt
	}
	s.sets = f
	tx.cacheFieldSets(s, f)
	return f, nil
}

// cacheFieldSets gives the field sets just read to the stream's entry in
// the metadata cache, when it lacks them (a View filled it) and they are
// its committed ones: a stream's first n sets never change while its
// version stands, so sets read with the committed count are right for the
// cached record. Without this, every read of a stream no write has touched
// since the cache took it would read its sets again.
func (tx *Tx) cacheFieldSets(s *streamRef, f *fieldSets) {
	c := tx.e.cache
	if c == nil || tx.snap != nil {
		return
	}
	c.mu.Lock()
	if ce := c.dbs[s.db][string(s.key)]; ce != nil && !ce.km.absent && ce.km.sets == nil &&
		ce.km.meta.Version == s.meta.Version && ce.km.sm.FieldSets == uint64(len(f.names)) {
		ce.km.sets = f
	}
	c.mu.Unlock()
}

// fieldSetFor returns the id of the stream's field set equal to fields,
// recording a new set when there is room; 0 means the entry keeps its
// names.
func (tx *Tx) fieldSetFor(s *streamRef, fields [][]byte) (uint64, error) {
	if len(fields) == 0 {
		return 0, nil
	}
	f, err := tx.fieldSets(s)
	if err != nil {
		return 0, err
	}
	if f != nil {
		for i := len(f.names) - 1; i >= 0; i-- {
			if sameFields(f.names[i], fields) {
				return uint64(i) + 1, nil
			}
		}
		if len(f.names) >= maxFieldSets {
			return 0, nil
		}
	}
	nf := &fieldSets{}
	if f != nil {
		nf.names = append(make([][][]byte, 0, len(f.names)+1), f.names...)
	}
	nf.names = append(nf.names, cloneFields(fields))
	id := uint64(len(nf.names))
	tx.kbuf = storage.AppendFieldSetKey(tx.kbuf[:0], s.db, s.key, s.meta.Version, id)
	tx.vbuf = storage.AppendFieldSet(tx.vbuf[:0], fields)
	if err := tx.b.Set(tx.kbuf, tx.vbuf); err != nil {
		return 0, err
	}
	s.sets = nf
	s.sm.FieldSets = id
	return id, nil
}
