package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/eddy-streams/eddy/storage"
)

// streamMeta is the body of a stream's metadata record: everything XADD,
// XLEN and XINFO need without touching the entries.
//
// Encoding: count:uvarint, then count uvarints in the order of the fields
// below. Fields are only ever appended; a decoder reading an older record
// leaves the missing ones zero.
type streamMeta struct {
	Length       uint64
	EntriesAdded uint64
	Nodes        uint64 // nodes of the Redis layout model (radix-tree-keys)
	Last         ID     // last-generated-id
	First        ID     // recorded-first-entry-id
	MaxDeleted   ID     // max-deleted-entry-id
	Tail         ID     // master ID of the last node; meaningful when Nodes > 0
	Groups       uint64 // consumer groups (next issue)
	FieldSets    uint64 // field sets recorded (fieldsets.go)
	Subjects     uint64 // live entries with a "subject" field (subjectindex.go)
	Bytes        uint64 // the live entries' messages as JetStream counts them (msgsize.go)
	// Seq is the sequence of the last entry added: entries ever added,
	// which unlike EntriesAdded XSETID cannot change (seqread.go).
	Seq uint64
	// Packed is 1 when the stream's entry records may hold several
	// entries each (records.go); 0, one each.
	Packed uint64
}

const streamMetaFields = 17

func (s *streamMeta) appendBinary(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, streamMetaFields)
	for _, v := range [streamMetaFields]uint64{
		s.Length, s.EntriesAdded, s.Nodes,
		s.Last.Ms, s.Last.Seq, s.First.Ms, s.First.Seq,
		s.MaxDeleted.Ms, s.MaxDeleted.Seq, s.Tail.Ms, s.Tail.Seq,
		s.Groups, s.FieldSets, s.Subjects, s.Bytes, s.Seq, s.Packed,
	} {
		dst = binary.AppendUvarint(dst, v)
	}
	return dst
}

func decodeStreamMeta(b []byte) (streamMeta, error) {
	var s streamMeta
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return s, storage.ErrCorrupt
	}
	b = b[k:]
	var vals [streamMetaFields]uint64
	for i := uint64(0); i < n; i++ {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return s, storage.ErrCorrupt
		}
		b = b[k:]
		if i < streamMetaFields {
			vals[i] = v
		}
	}
	s.Length, s.EntriesAdded, s.Nodes = vals[0], vals[1], vals[2]
	s.Last = ID{vals[3], vals[4]}
	s.First = ID{vals[5], vals[6]}
	s.MaxDeleted = ID{vals[7], vals[8]}
	s.Tail = ID{vals[9], vals[10]}
	s.Groups = vals[11]
	s.FieldSets, s.Subjects, s.Bytes, s.Seq = vals[12], vals[13], vals[14], vals[15]
	s.Packed = vals[16]
	return s, nil
}

// streamRef is a stream loaded for one command: where it lives and its
// metadata, to be saved back with save.
type streamRef struct {
	db   int
	key  []byte
	meta storage.Meta
	sm   streamMeta
	// unsaved: made by createStream and not saved yet, so save creates
	// the key (putMeta with no old record).
	unsaved bool
	// tail is the node at sm.Tail when hasTail (from the metadata cache,
	// or as appendEntry left it). Whatever changes that node otherwise
	// must clear hasTail (forgetTail).
	tail    Node
	hasTail bool
	// The entry record the transaction last deferred for the stream,
	// which its next entries may join (Tx.addEntry): the ID it is keyed
	// by, its last entry's, how many entries it holds (0: none) and its
	// place among the deferred records.
	rec, recLast ID
	recN, recIdx int
	// sets are the stream's field sets once loaded (nil: not yet); never
	// modified in place, so a cached ref can share them.
	sets *fieldSets
}

// forgetTail drops the in-memory tail node if master is the tail's: the
// node record is being changed by other means than appendEntry.
func (s *streamRef) forgetTail(master ID) {
	if master == s.sm.Tail {
		s.hasTail = false
	}
}

// refSlabMin is the size of newRef's first slab of refs.
const refSlabMin = 16

// newRef returns a zeroed streamRef living as long as the transaction.
func (tx *Tx) newRef() *streamRef {
	if tx.nrefs < len(tx.refs) {
		tx.nrefs++
		return &tx.refs[tx.nrefs-1]
	}
	if tx.nmore == len(tx.more) {
		// A slab as large as what the transaction holds already: a group
		// of n refs costs log n allocations, not n.
		slab := make([]streamRef, max(refSlabMin, len(tx.more)))
		for i := range slab {
			tx.more = append(tx.more, &slab[i])
		}
	}
	tx.nmore++
	return tx.more[tx.nmore-1]
}

// loadStream returns the stream at key; ok is false if the key does not
// exist, ErrWrongType if it holds another type.
func (tx *Tx) loadStream(db int, key []byte) (*streamRef, bool, error) {
	km, ok, err := tx.lookupMeta(db, key)
	if err != nil || !ok {
		return nil, false, err
	}
	if km.meta.Type != storage.TypeStream {
		return nil, false, ErrWrongType
	}
	s := tx.newRef()
	*s = streamRef{db: db, key: tx.keep(key), meta: km.meta, sm: km.sm, sets: km.sets}
	if km.hasTail && km.sm.Nodes > 0 && km.tail.Master == km.sm.Tail {
		s.tail, s.hasTail = km.tail, true
	}
	s.rec, s.recLast, s.recN, s.recIdx = km.rec, km.recLast, km.recN, km.recIdx
	return s, true, nil
}

// createStream makes a new, empty stream at key (which must not exist).
func (tx *Tx) createStream(db int, key []byte) (*streamRef, error) {
	v, err := tx.newVersion()
	if err != nil {
		return nil, err
	}
	s := tx.newRef()
	*s = streamRef{
		db:      db,
		key:     tx.keep(key),
		meta:    storage.Meta{Type: storage.TypeStream, Version: v},
		unsaved: true,
	}
	return s, nil
}

// save writes the stream's metadata record, and stages it for the
// metadata cache with the tail node if known. With the cache on, the
// record is encoded from what is staged, once per group commit rather
// than once per XADD (encodeLazyMeta).
func (tx *Tx) save(s *streamRef) error {
	m := s.meta
	lazy := tx.e.cache != nil
	if !lazy {
		tx.body = s.sm.appendBinary(tx.body[:0])
		m.Body = tx.body
	}
	old := &s.meta
	if s.unsaved {
		old, s.unsaved = nil, false
	}
	if err := tx.writeMeta(s.db, s.key, &m, old, lazy); err != nil {
		return err
	}
	km := keyMeta{meta: s.meta, sm: s.sm, sets: s.sets,
		rec: s.rec, recLast: s.recLast, recN: s.recN, recIdx: s.recIdx}
	if s.hasTail && s.sm.Nodes > 0 && s.tail.Master == s.sm.Tail {
		km.tail, km.hasTail = s.tail, true
	}
	return tx.stage(s.db, s.key, false, &km)
}

// appendEntryKey appends the key of entry id to dst.
func (s *streamRef) appendEntryKey(dst []byte, id ID) []byte {
	return storage.AppendEntryKey(dst, s.db, s.key, s.meta.Version, id.Ms, id.Seq)
}

func (s *streamRef) entryKey(id ID) []byte {
	return storage.AppendEntryKey(nil, s.db, s.key, s.meta.Version, id.Ms, id.Seq)
}

// appendNodeKey appends the key of the node whose master is id to dst.
func (s *streamRef) appendNodeKey(dst []byte, id ID) []byte {
	return storage.AppendNodeKey(dst, s.db, s.key, s.meta.Version, id.Ms, id.Seq)
}

func (s *streamRef) nodeKey(id ID) []byte {
	return storage.AppendNodeKey(nil, s.db, s.key, s.meta.Version, id.Ms, id.Seq)
}

// entryBounds returns [lower, upper) of the entry keys with lo <= ID <= hi.
func (s *streamRef) entryBounds(lo, hi ID) (lower, upper []byte) {
	return s.entryKey(lo), append(s.entryKey(hi), 0)
}

// encodeLazy appends to dst the value of a record deferred lazily: a
// stream's metadata record (save) or its tail node (appendEntry).
func (tx *Tx) encodeLazy(key, dst []byte) ([]byte, error) {
	if db, k, err := storage.DecodeMetaKey(key); err == nil {
		return tx.encodeLazyMeta(db, k, dst)
	}
	return tx.encodeLazyTail(key, dst)
}

// encodeLazyTail appends to dst the node record whose key is key, a
// stream's tail node deferred lazily by appendEntry: it is encoded from
// the tail node staged with the stream's metadata, which save stages
// right after. Nothing between them reads the node's range: an XADD that
// trims (which reads the nodes) defers the record with its value. When
// the staged tail changes (a new node, a restaged record without it, a
// dropped key), stage makes the old tail's record first.
func (tx *Tx) encodeLazyTail(key, dst []byte) ([]byte, error) {
	db, k, version, ms, seq, err := storage.DecodeNodeKey(key)
	if err != nil {
		return nil, err
	}
	st := tx.stagedFor(db, k)
	if st == nil || st.gone || st.km.meta.Version != version || !st.km.hasTail || st.km.tail.Master != (ID{ms, seq}) {
		return nil, fmt.Errorf("stream: lazy node record %q has no staged tail", key)
	}
	return st.km.tail.AppendBinary(dst), nil
}

// encodeLazyMeta appends to dst the metadata record of stream key in
// database db, saved lazily (save): it is encoded from the stream's
// staged metadata, which every save stages right after its write.
func (tx *Tx) encodeLazyMeta(db int, key, dst []byte) ([]byte, error) {
	st := tx.stagedFor(db, key)
	if st == nil || st.gone || st.km.meta.Type != storage.TypeStream {
		return nil, fmt.Errorf("stream: lazy metadata record of %q has no staged stream", key)
	}
	m := st.km.meta
	tx.lazyBody = st.km.sm.appendBinary(tx.lazyBody[:0])
	m.Body = tx.lazyBody
	return storage.AppendMeta(dst, &m), nil
}
