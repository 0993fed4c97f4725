package stream

import "github.com/eddy-streams/eddy/storage"

// The sequence view: NATS JetStream numbers a stream's messages 1, 2, 3, …
// in the order they were added and never renumbers them. Eddy gives every
// entry the same number, its sequence: the count of entries ever added to
// the stream, this one included (unlike entries-added, which XSETID may
// change). XDEL and trimming remove entries but
// leave the others' sequences alone, so sequences have gaps exactly where
// JetStream's would.
//
// An entry's subject is the value of its field "subject", or the stream's
// key when it has none.

// SeqEntry is an entry seen through the sequence view.
type SeqEntry struct {
	Seq     uint64
	ID      ID
	Subject []byte   // the value of field "subject", or the key
	Fields  [][]byte // field, value, field, value, … (all fields, as XRANGE returns them)
}

// SeqState describes a stream for JetStream's STREAM.INFO.
type SeqState struct {
	Messages uint64 // live entries (XLEN)
	Bytes    uint64 // bytes of the live entries' messages as JetStream counts them (jetStreamMsgSize)
	FirstSeq uint64 // sequence of the first live entry; LastSeq+1 when empty
	LastSeq  uint64 // entries ever added
	FirstID  ID     // ID of the first live entry; zero when empty
	LastID   ID     // ID of the last live entry; zero when empty
}

// SeqState returns the state of stream key; ok is false when the key does
// not exist. A key of another type gives ErrWrongType.
func (tx *Tx) SeqState(db int, key []byte) (st SeqState, ok bool, err error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok {
		return st, false, err
	}
	st = SeqState{Messages: s.sm.Length, Bytes: s.sm.Bytes, FirstSeq: s.sm.Seq + 1, LastSeq: s.sm.Seq}
	if s.sm.Length == 0 {
		return st, true, nil
	}
	first, ok, err := tx.seqWalk(s, 0, false, nil)
	if err != nil || !ok {
		return st, true, err
	}
	last, _, err := tx.seqWalk(s, 0, true, nil)
	if err != nil {
		return st, true, err
	}
	st.FirstSeq, st.FirstID, st.LastID = first.Seq, first.ID, last.ID
	return st, true, nil
}

// EntryBySeq returns the live entry with sequence seq; ok is false when the
// key does not exist or the entry was deleted or never added.
func (tx *Tx) EntryBySeq(db int, key []byte, seq uint64) (e SeqEntry, ok bool, err error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || seq == 0 || seq > s.sm.Seq {
		return e, false, err
	}
	e, ok, err = tx.seqWalk(s, seq, false, nil)
	if err != nil || !ok || e.Seq != seq {
		return SeqEntry{}, false, err
	}
	return e, true, nil
}

// seqWalk returns the first live entry with sequence >= from (or, with
// last, the last live entry) whose subject satisfies match (nil: any).
func (tx *Tx) seqWalk(s *streamRef, from uint64, last bool, match func(subject []byte) bool) (SeqEntry, bool, error) {
	var found SeqEntry
	var ok bool
	err := tx.seqEach(s, from, last, func(e SeqEntry) bool {
		if match == nil || match(e.Subject) {
			found, ok = e, true
		}
		return !ok
	})
	return found, ok, err
}

// seqEach calls fn with every live entry with sequence >= from, in
// sequence order (backward from the last entry with last), until fn
// returns false.
func (tx *Tx) seqEach(s *streamRef, from uint64, last bool, fn func(e SeqEntry) bool) error {
	start := ID{}
	if !last {
		var err error
		if start, err = tx.seqStart(s, from); err != nil {
			return err
		}
	}
	lo, hi := s.entryBounds(start, MaxID)
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	sets, err := tx.fieldSets(s)
	if err != nil {
		return err
	}
	ok := it.First()
	if last {
		ok = it.Last()
	}
	for ; ok; ok = step(it, last) {
		es, err := appendRecordEntries(tx.recs[:0], it.Key(), it.Value())
		tx.recs = es
		if err != nil {
			return err
		}
		for i := range es {
			e := es[i]
			if last {
				e = es[len(es)-1-i]
			}
			h, _, err := storage.DecodeEntryHeader(e.v)
			if err != nil {
				return err
			}
			if h.Seq < from {
				continue
			}
			se, err := decodeSeqEntry(s, sets, e.id, e.v)
			if err != nil {
				return err
			}
			if !fn(se) {
				return nil
			}
		}
	}
	return nil
}

// seqStart is where a walk for sequence from on starts: the node holding
// sequence from, if any, starts at the last seq index record at or
// before from.
func (tx *Tx) seqStart(s *streamRef, from uint64) (ID, error) {
	if from <= 1 {
		return ID{}, nil
	}
	lo, hi := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindSeqIndex)
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return ID{}, err
	}
	var start ID
	if it.SeekLT(storage.AppendSeqIndexKey(nil, s.db, s.key, s.meta.Version, from+1)) {
		ms, seq, err := storage.DecodeIDValue(it.Value())
		if err != nil {
			it.Close()
			return ID{}, err
		}
		start = ID{ms, seq}
	}
	return start, it.Close()
}

// decodeSeqEntry copies an entry out of iterator memory.
func decodeSeqEntry(s *streamRef, sets *fieldSets, id ID, v []byte) (SeqEntry, error) {
	h, fv, err := storage.DecodeEntryValue(append([]byte(nil), v...), sets, nil)
	if err != nil {
		return SeqEntry{}, err
	}
	e := SeqEntry{Seq: h.Seq, ID: id, Fields: fv, Subject: s.key}
	if subject, ok := entrySubject(fv); ok {
		e.Subject = subject
	}
	return e, nil
}
