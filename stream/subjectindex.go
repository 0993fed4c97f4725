package stream

import "github.com/eddy-streams/eddy/storage"

// The subject index: for every live entry with a field "subject", a
// record (subject, sequence) → entry ID (storage.AppendSubjectKey),
// written by the XADD that adds the entry and deleted with it
// (forgetEntry), in the same batch; streamMeta.Subjects counts them. It
// answers "the first or last entry with this subject" with one seek, and
// lists a stream's distinct subjects with one seek each (SeqSubjects).
//
// What a filter matches is the caller's rule (the NATS bridge's subject
// filters); the engine only asks it which subject it names, if just one,
// and whether a subject passes.

// SubjectFilter selects entries by subject for NextBySubject and
// LastBySubject. A nil SubjectFilter selects every entry.
type SubjectFilter interface {
	// Literal returns the one subject the filter selects, ok false when
	// it may select several.
	Literal() (subject []byte, ok bool)
	// Match reports whether the filter selects subject.
	Match(subject []byte) bool
}

// entrySubject returns the value of the first field named "subject".
func entrySubject(fv [][]byte) ([]byte, bool) {
	for i := 0; i+1 < len(fv); i += 2 {
		if string(fv[i]) == "subject" {
			return fv[i+1], true
		}
	}
	return nil, false
}

// NextBySubject returns the first live entry with sequence >= from whose
// subject f selects (nil: any).
func (tx *Tx) NextBySubject(db int, key []byte, from uint64, f SubjectFilter) (e SeqEntry, ok bool, err error) {
	return tx.bySubject(db, key, from, f, false)
}

// LastBySubject returns the live entry with the highest sequence whose
// subject f selects (nil: any).
func (tx *Tx) LastBySubject(db int, key []byte, f SubjectFilter) (e SeqEntry, ok bool, err error) {
	return tx.bySubject(db, key, 0, f, true)
}

// bySubject finds the entry for NextBySubject (from on, first) or
// LastBySubject (last). A stream whose entries all lack a subject field
// has one subject, its key; one whose entries all have it is answered from
// the subject index; a mixed stream is walked entry by entry.
func (tx *Tx) bySubject(db int, key []byte, from uint64, f SubjectFilter, last bool) (SeqEntry, bool, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || s.sm.Length == 0 || from > s.sm.Seq {
		return SeqEntry{}, false, err
	}
	if f == nil {
		return tx.seqWalk(s, from, last, nil)
	}
	switch {
	case s.sm.Subjects == 0:
		if !f.Match(key) {
			return SeqEntry{}, false, nil
		}
		return tx.seqWalk(s, from, last, nil)
	case s.sm.Subjects == s.sm.Length:
		return tx.subjectIndexFind(s, from, f, last)
	}
	return tx.seqWalk(s, from, last, f.Match)
}

// subjectIndexFind answers bySubject from the subject index: for each
// subject f selects, its first record at or after from (or its last
// record); the lowest (or highest) sequence wins.
func (tx *Tx) subjectIndexFind(s *streamRef, from uint64, f SubjectFilter, last bool) (SeqEntry, bool, error) {
	var it *storage.Iter
	var err error
	var bestSeq uint64
	var bestID ID
	found := false
	consider := func(subject []byte) error {
		lo, hi := storage.SubjectBounds(s.db, s.key, s.meta.Version, subject)
		sit, err := tx.r.NewIter(lo, hi)
		if err != nil {
			return err
		}
		var ok bool
		if last {
			ok = sit.Last()
		} else {
			ok = sit.SeekGE(storage.AppendSubjectKey(nil, s.db, s.key, s.meta.Version, subject, from))
		}
		if ok {
			_, n, err := storage.DecodeSubjectKey(sit.Key())
			if err != nil {
				sit.Close()
				return err
			}
			ms, seq, err := storage.DecodeIDValue(sit.Value())
			if err != nil {
				sit.Close()
				return err
			}
			if !found || (last && n > bestSeq) || (!last && n < bestSeq) {
				bestSeq, bestID, found = n, ID{ms, seq}, true
			}
		}
		return sit.Close()
	}
	if subject, ok := f.Literal(); ok {
		err = consider(subject)
	} else {
		lo, hi := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindSubjectIndex)
		if it, err = tx.r.NewIter(lo, hi); err != nil {
			return SeqEntry{}, false, err
		}
		// One visit per distinct subject: after looking at a subject,
		// seek past all of its records.
		for ok := it.First(); ok && err == nil; {
			var subject []byte
			if subject, _, err = storage.DecodeSubjectKey(it.Key()); err != nil {
				break
			}
			subject = append([]byte(nil), subject...)
			if f.Match(subject) {
				err = consider(subject)
			}
			_, next := storage.SubjectBounds(s.db, s.key, s.meta.Version, subject)
			ok = it.SeekGE(next)
		}
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil || !found {
		return SeqEntry{}, false, err
	}
	fe, ok, err := tx.findEntry(s, bestID)
	if err != nil || !ok {
		return SeqEntry{}, false, err
	}
	sets, err := tx.fieldSets(s)
	if err != nil {
		return SeqEntry{}, false, err
	}
	e, err := decodeSeqEntry(s, sets, bestID, fe.v)
	return e, err == nil, err
}
