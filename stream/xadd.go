package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// XAdd appends an entry. ok is false when NOMKSTREAM was given and the key
// does not exist (Redis replies nil).
func (tx *Tx) XAdd(db int, key []byte, a *XAddArgs) (ID, bool, error) {
	// Redis refuses an explicit 0-0 before it looks at the key, so that no
	// empty stream is left behind.
	if !a.Auto && !a.SeqAuto && a.ID.IsZero() {
		return ID{}, false, ErrIDZero
	}
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return ID{}, false, err
	}
	if !ok {
		if a.NoMkStream {
			return ID{}, false, nil
		}
		if s, err = tx.createStream(db, key); err != nil {
			return ID{}, false, err
		}
	}
	if s.sm.Last == MaxID {
		return ID{}, false, ErrExhausted
	}
	id, err := nextID(s.sm.Last, a, uint64(tx.now))
	if err != nil {
		return ID{}, false, err
	}
	// The tail node's record is encoded lazily unless the trim below
	// reads the nodes before save stages the tail (encodeLazyTail).
	lazyTail := tx.e.cache != nil && a.Trim.Strategy == TrimNone
	if err := tx.appendEntry(s, id, a.Fields, lazyTail); err != nil {
		return ID{}, false, err
	}
	if a.Trim.Strategy != TrimNone {
		if _, err := tx.trim(s, a.Trim); err != nil {
			return ID{}, false, err
		}
	}
	if err := tx.save(s); err != nil {
		return ID{}, false, err
	}
	tx.note(Appended, db, key)
	return id, true, nil
}

// nextID picks the ID of a new entry the way Redis's streamAppendItem does:
// "*" never goes backwards even when the clock does.
func nextID(last ID, a *XAddArgs, now uint64) (ID, error) {
	switch {
	case a.Auto:
		if now > last.Ms {
			return ID{now, 0}, nil
		}
		id, _ := last.Next()
		return id, nil
	case a.SeqAuto:
		if a.ID.Ms == last.Ms {
			if last.Seq == MaxID.Seq {
				return ID{}, ErrIDTooSmall
			}
			return ID{a.ID.Ms, last.Seq + 1}, nil
		}
		if a.ID.Ms < last.Ms {
			return ID{}, ErrIDTooSmall
		}
		return ID{a.ID.Ms, 0}, nil
	}
	if !last.Less(a.ID) {
		return ID{}, ErrIDTooSmall
	}
	return a.ID, nil
}

// appendTargetEvery is how many appends make a stream an append target of
// the store (storage.DB.MarkAppendTarget): a stream is marked at every
// multiple of it, and when a stream at least this long is read from the
// store into the metadata cache (as after a restart). Its entries are then
// tables of their own, so streams much shorter than a table (~2 MB, ~30k
// entries) are left alone.
const appendTargetEvery = 4096

// markIfLong marks a stream version whose metadata is loaded (from the
// store or a replicated batch) as an append target when it is at least
// appendTargetEvery entries long.
func (e *Engine) markIfLong(db int, key []byte, version uint64, sm *streamMeta) {
	if sm.Length >= appendTargetEvery {
		e.db.MarkAppendTarget(db, key, version)
	}
}

// appendEntry writes the entry and its place in the node model. The tail
// node comes from memory when the stream's ref carries it, else from its
// record; either way the ref carries the updated node on to save.
func (tx *Tx) appendEntry(s *streamRef, id ID, fv [][]byte, lazyTail bool) error {
	fields, values := tx.splitPairs(fv)
	fresh := true
	if s.sm.Nodes > 0 && !s.hasTail {
		tx.kbuf = s.appendNodeKey(tx.kbuf[:0], s.sm.Tail)
		v, ok, err := tx.r.Get(tx.kbuf)
		if err != nil {
			return err
		}
		if ok {
			if s.tail, err = DecodeNode(v); err != nil {
				return err
			}
			s.hasTail = true
		}
	}
	if s.sm.Nodes > 0 && s.hasTail {
		fresh = !s.tail.Accepts(fields, values, tx.e.opts.Limits())
	}
	seq := s.sm.Seq + 1
	if fresh {
		s.tail = NewNode(id, fields, values)
		s.tail.FirstSeq = seq
		s.sm.Nodes++
		s.sm.Tail = id
		tx.kbuf = storage.AppendSeqIndexKey(tx.kbuf[:0], s.db, s.key, s.meta.Version, seq)
		tx.vbuf = storage.AppendIDValue(tx.vbuf[:0], id.Ms, id.Seq)
		if err := tx.b.Set(tx.kbuf, tx.vbuf); err != nil {
			return err
		}
	} else {
		s.tail.Append(id, fields, values)
	}
	s.hasTail = true
	tx.kbuf = s.appendNodeKey(tx.kbuf[:0], s.tail.Master)
	// The next XADD rewrites the tail node: written once, when the group
	// ends (txbatch.go), and with the metadata cache on, encoded then
	// from the tail that save stages (encodeLazyTail).
	if lazyTail {
		tx.b.SetDeferredLazy(tx.kbuf)
	} else {
		tx.vbuf = s.tail.AppendBinary(tx.vbuf[:0])
		tx.b.SetDeferred(tx.kbuf, tx.vbuf)
	}
	set, err := tx.fieldSetFor(s, fields)
	if err != nil {
		return err
	}
	tx.kbuf = s.appendEntryKey(tx.kbuf[:0], id)
	if set != 0 {
		tx.vbuf = storage.AppendEntryValueSet(tx.vbuf[:0], seq, set, fv)
	} else {
		tx.vbuf = storage.AppendEntryValue(tx.vbuf[:0], seq, fv)
	}
	if err := tx.addEntry(s, id, tx.vbuf); err != nil {
		return err
	}
	if subject, ok := entrySubject(fv); ok {
		tx.kbuf = storage.AppendSubjectKey(tx.kbuf[:0], s.db, s.key, s.meta.Version, subject, seq)
		tx.vbuf = storage.AppendIDValue(tx.vbuf[:0], id.Ms, id.Seq)
		if err := tx.b.Set(tx.kbuf, tx.vbuf); err != nil {
			return err
		}
		s.sm.Subjects++
	}
	s.sm.Bytes += jetStreamMsgSize(s.key, fv)
	s.sm.Length++
	s.sm.EntriesAdded++
	if s.sm.EntriesAdded%appendTargetEvery == 0 {
		tx.e.db.MarkAppendTarget(s.db, s.key, s.meta.Version)
	}
	s.sm.Seq = seq
	s.sm.Last = id
	if s.sm.Length == 1 {
		s.sm.First = id
	}
	return nil
}

// splitPairs splits field, value, field, value... into fields and values,
// in the transaction's scratch slices (valid until the next call).
func (tx *Tx) splitPairs(fv [][]byte) (fields, values [][]byte) {
	fields, values = tx.fields[:0], tx.values[:0]
	for i := 0; i+1 < len(fv); i += 2 {
		fields = append(fields, fv[i])
		values = append(values, fv[i+1])
	}
	tx.fields, tx.values = fields, values
	return fields, values
}
