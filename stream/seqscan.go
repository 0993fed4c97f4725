package stream

import "github.com/eddy-streams/eddy/storage"

// Walks of the sequence view for the NATS bridge's batch Direct Gets,
// multi-last gets and per-subject counts: one iterator over the entries,
// in sequence order.

// SeqScan calls fn with every live entry of stream key whose sequence is
// >= from, in sequence order, until fn returns false. The entry is a copy
// fn may keep. A key of another type gives ErrWrongType.
func (tx *Tx) SeqScan(db int, key []byte, from uint64, fn func(e SeqEntry) bool) error {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || s.sm.Length == 0 || from > s.sm.Seq {
		return err
	}
	return tx.seqEach(s, from, false, fn)
}

// SeqFromID returns the sequence of the first live entry of stream key
// whose ID is >= id, or the stream's last sequence + 1 when there is
// none (JetStream's answer for a start time after the last message); ok
// is false when the key does not exist.
func (tx *Tx) SeqFromID(db int, key []byte, id ID) (seq uint64, ok bool, err error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok {
		return 0, false, err
	}
	seq = s.sm.Seq + 1
	_, err = tx.eachEntry(s, id, MaxID, 1, false, func(_ *fieldSets, _ ID, v []byte) error {
		h, _, err := storage.DecodeEntryHeader(v)
		seq = h.Seq
		return err
	})
	if err != nil {
		return 0, false, err
	}
	return seq, true, nil
}

// SeqSubjects returns the distinct subjects of stream key's live entries,
// in no particular order, when that is cheap to know: a stream
// whose entries all lack a subject field has one, its key; one whose
// entries all have it is read from the subject index, one seek per
// subject; a mixed stream is walked when it has at most walkLimit
// entries. complete is false when the answer was not read in full: more
// than max subjects, or a mixed stream above walkLimit.
func (tx *Tx) SeqSubjects(db int, key []byte, max, walkLimit int) (subjects [][]byte, complete bool, err error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || s.sm.Length == 0 {
		return nil, err == nil, err
	}
	switch {
	case s.sm.Subjects == 0:
		return [][]byte{append([]byte(nil), key...)}, true, nil
	case s.sm.Subjects == s.sm.Length:
		lo, hi := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindSubjectIndex)
		it, err := tx.r.NewIter(lo, hi)
		if err != nil {
			return nil, false, err
		}
		for ok := it.First(); ok; {
			subject, _, err := storage.DecodeSubjectKey(it.Key())
			if err != nil {
				it.Close()
				return nil, false, err
			}
			if len(subjects) == max {
				return subjects, false, it.Close()
			}
			subject = append([]byte(nil), subject...)
			subjects = append(subjects, subject)
			_, next := storage.SubjectBounds(s.db, s.key, s.meta.Version, subject)
			ok = it.SeekGE(next)
		}
		return subjects, true, it.Close()
	case s.sm.Length > uint64(walkLimit):
		return nil, false, nil
	}
	seen := map[string]bool{}
	err = tx.SeqScan(db, key, 0, func(e SeqEntry) bool {
		if !seen[string(e.Subject)] {
			seen[string(e.Subject)] = true
			subjects = append(subjects, e.Subject)
		}
		return len(subjects) <= max
	})
	if err != nil || len(subjects) > max {
		return nil, false, err
	}
	return subjects, true, nil
}

// StreamKeys calls fn with the key of every stream in database db that
// comes after key after (nil: from the first), in scan order (eachKey),
// until fn returns false. It reads the keys' metadata records, not the
// streams' contents; the key is valid only during the call.
func (tx *Tx) StreamKeys(db int, after []byte, fn func(key []byte) bool) error {
	return tx.eachKey(db, after, func(key []byte, m *storage.Meta) (bool, error) {
		return m.Type != storage.TypeStream || fn(key), nil
	})
}
