package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// XTrim trims and returns the number of entries removed.
func (tx *Tx) XTrim(db int, key []byte, t Trim) (int64, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok {
		return 0, err
	}
	nodes := s.sm.Nodes
	n, err := tx.trim(s, t)
	if err != nil {
		return 0, err
	}
	// A MINID trim may remove nodes whose entries were all deleted
	// already: nothing is trimmed, yet the node count changed and must be
	// saved. As in Redis, only a trim that removed entries touches the key
	// for WATCH and notifications.
	if n == 0 && s.sm.Nodes == nodes {
		return 0, nil
	}
	if err := tx.save(s); err != nil {
		return 0, err
	}
	if n > 0 {
		tx.note(Written, db, key)
	}
	return n, nil
}

// trim removes entries from the head the way Redis's streamTrim does on
// its node layout: whole nodes while they may go entirely; then, unless
// approximate, entries of the first remaining node one by one. The caller
// saves s.
func (tx *Tx) trim(s *streamRef, t Trim) (int64, error) {
	var limit int64
	if t.Approx {
		limit = t.Limit
		if !t.LimitGiven {
			limit = DefaultTrimLimit(tx.e.opts.Limits().MaxEntries)
		}
	}
	lower, upper := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindNode)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	length := int64(s.sm.Length)
	var deleted int64
	var minid *ID
	if t.Strategy == TrimMinID {
		minid = &t.MinID
	}
	for ok := it.First(); ok; ok = it.Next() {
		if minid == nil && length <= t.MaxLen {
			break // decided without decoding the node
		}
		node, err := DecodeNode(it.Value())
		if err != nil {
			return 0, err
		}
		stop, whole := trimStep(&node, length, deleted, t.MaxLen, minid, limit)
		if stop {
			break
		}
		if whole {
			lo, hi := s.entryBounds(node.Master, node.Last)
			if err := tx.forgetRange(s, lo, hi); err != nil {
				return 0, err
			}
			if err := tx.b.DeleteRange(lo, hi); err != nil {
				return 0, err
			}
			if err := tx.deleteNode(s, &node); err != nil {
				return 0, err
			}
			s.forgetTail(node.Master)
			s.sm.Nodes--
			length -= node.Count
			deleted += node.Count
			continue
		}
		if t.Approx {
			break
		}
		n, err := tx.trimNode(s, &node, t, length)
		if err != nil {
			return 0, err
		}
		length -= n
		deleted += n
		break
	}
	s.sm.Length = uint64(length)
	if deleted > 0 {
		if err := tx.refreshFirst(s); err != nil {
			return 0, err
		}
	}
	return deleted, nil
}

// trimNode deletes entries of node from its head until the trim condition
// holds, and saves the node. A record of several entries that the trim
// ends in is rewritten with those left.
func (tx *Tx) trimNode(s *streamRef, node *Node, t Trim, length int64) (int64, error) {
	lo, hi := s.entryBounds(node.Master, node.Last)
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n int64
	keep := func(id ID) bool {
		if t.Strategy == TrimMaxLen {
			return length-n <= t.MaxLen
		}
		return !id.Less(t.MinID)
	}
	for ok := it.First(); ok; ok = it.Next() {
		es, err := appendRecordEntries(tx.recs[:0], it.Key(), it.Value())
		tx.recs = es
		if err != nil {
			return 0, err
		}
		gone := 0
		for _, e := range es {
			if keep(e.id) {
				break
			}
			if err := tx.forgetEntry(s, e.v); err != nil {
				return 0, err
			}
			node.Delete(ID{}, nil, nil)
			n++
			gone++
		}
		if gone == len(es) {
			if err := tx.b.Delete(it.Key()); err != nil {
				return 0, err
			}
			continue
		}
		if gone > 0 {
			if err := tx.putRecord(append([]byte(nil), it.Key()...), es[gone:]); err != nil {
				return 0, err
			}
		}
		break
	}
	if n > 0 {
		s.forgetTail(node.Master)
		if err := tx.b.Set(s.nodeKey(node.Master), node.AppendBinary(nil)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// refreshFirst recomputes recorded-first-entry-id after deletions.
func (tx *Tx) refreshFirst(s *streamRef) error {
	if s.sm.Length == 0 {
		s.sm.First = ID{}
		return nil
	}
	e, ok, err := tx.edgeEntry(s, false)
	if err != nil {
		return err
	}
	if ok {
		s.sm.First = e.ID
	}
	return nil
}

// XDel deletes the given IDs and returns how many existed.
func (tx *Tx) XDel(db int, key []byte, ids []ID) (int64, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok {
		return 0, err
	}
	var deleted int64
	firstGone := false
	for _, id := range ids {
		f, exists, err := tx.findEntry(s, id)
		if err != nil {
			return 0, err
		}
		if !exists {
			continue
		}
		if err := tx.forgetEntry(s, f.v); err != nil {
			return 0, err
		}
		if err := tx.deleteFound(f, id); err != nil {
			return 0, err
		}
		if err := tx.deleteFromNode(s, id); err != nil {
			return 0, err
		}
		s.sm.Length--
		deleted++
		if s.sm.MaxDeleted.Less(id) {
			s.sm.MaxDeleted = id
		}
		if id == s.sm.First {
			firstGone = true
		}
	}
	if deleted == 0 {
		return 0, nil
	}
	if s.sm.Length == 0 || firstGone {
		if err := tx.refreshFirst(s); err != nil {
			return 0, err
		}
	}
	if err := tx.save(s); err != nil {
		return 0, err
	}
	tx.note(Written, db, key)
	return deleted, nil
}

// deleteFromNode flags id deleted in the node holding it; a node left with
// no live entry is freed, as Redis frees its listpack.
func (tx *Tx) deleteFromNode(s *streamRef, id ID) error {
	lower, upper := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindNode)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return err
	}
	defer it.Close()
	if !it.SeekLT(append(s.nodeKey(id), 0)) {
		return storage.ErrCorrupt
	}
	node, err := DecodeNode(it.Value())
	if err != nil {
		return err
	}
	node.Delete(id, nil, nil)
	s.forgetTail(node.Master)
	if node.Count > 0 {
		return tx.b.Set(s.nodeKey(node.Master), node.AppendBinary(nil))
	}
	if err := tx.deleteNode(s, &node); err != nil {
		return err
	}
	s.sm.Nodes--
	if node.Master == s.sm.Tail && s.sm.Nodes > 0 {
		if !it.Prev() {
			return storage.ErrCorrupt
		}
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			return err
		}
		s.sm.Tail = ID{ms, seq}
	}
	return nil
}

// deleteNode deletes a node's record and its seq index record.
func (tx *Tx) deleteNode(s *streamRef, node *Node) error {
	if err := tx.b.Delete(s.nodeKey(node.Master)); err != nil {
		return err
	}
	return tx.b.Delete(storage.AppendSeqIndexKey(nil, s.db, s.key, s.meta.Version, node.FirstSeq))
}

// forgetEntry takes an entry about to be deleted out of the stream's
// bookkeeping: its subject index record and SeqState's byte count.
func (tx *Tx) forgetEntry(s *streamRef, v []byte) error {
	sets, err := tx.fieldSets(s)
	if err != nil {
		return err
	}
	var scratch [16][]byte
	h, fv, err := storage.DecodeEntryValue(v, sets, scratch[:0])
	if err != nil {
		return err
	}
	s.sm.Bytes -= min(jetStreamMsgSize(s.key, fv), s.sm.Bytes)
	if subject, ok := entrySubject(fv); ok {
		if err := tx.b.Delete(storage.AppendSubjectKey(nil, s.db, s.key, s.meta.Version, subject, h.Seq)); err != nil {
			return err
		}
		s.sm.Subjects -= min(1, s.sm.Subjects)
	}
	return nil
}

// forgetRange calls forgetEntry for every entry of the records keyed in
// [lo, hi).
func (tx *Tx) forgetRange(s *streamRef, lo, hi []byte) error {
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		es, err := appendRecordEntries(tx.recs[:0], it.Key(), it.Value())
		tx.recs = es
		for _, e := range es {
			if err == nil {
				err = tx.forgetEntry(s, e.v)
			}
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}
