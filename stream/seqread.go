package stream

import (
	"bytes"
	"strings"

	"github.com/eddy-streams/eddy/storage"
)

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
	Bytes    uint64 // bytes of the live entries' messages as JetStream counts them (msgBytes)
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

// NextBySubject returns the first live entry with sequence >= from whose
// subject matches filter, a NATS subject filter ("*" matches one token,
// ">" one or more trailing tokens); "" matches every entry.
func (tx *Tx) NextBySubject(db int, key []byte, from uint64, filter string) (e SeqEntry, ok bool, err error) {
	return tx.bySubject(db, key, from, filter, false)
}

// LastBySubject returns the live entry with the highest sequence whose
// subject matches filter (as NextBySubject).
func (tx *Tx) LastBySubject(db int, key []byte, filter string) (e SeqEntry, ok bool, err error) {
	return tx.bySubject(db, key, 0, filter, true)
}

// bySubject finds the entry for NextBySubject (from on, first) or
// LastBySubject (last). A stream whose entries all lack a subject field
// has one subject, its key; one whose entries all have it is answered from
// the subject index; a mixed stream is walked entry by entry.
func (tx *Tx) bySubject(db int, key []byte, from uint64, filter string, last bool) (SeqEntry, bool, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || s.sm.Length == 0 || from > s.sm.Seq {
		return SeqEntry{}, false, err
	}
	if filter == "" {
		return tx.seqWalk(s, from, last, nil)
	}
	switch {
	case s.sm.Subjects == 0:
		if !SubjectMatches(filter, key) {
			return SeqEntry{}, false, nil
		}
		return tx.seqWalk(s, from, last, nil)
	case s.sm.Subjects == s.sm.Length:
		return tx.subjectIndexFind(s, from, filter, last)
	}
	return tx.seqWalk(s, from, last, func(subject []byte) bool { return SubjectMatches(filter, subject) })
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

// subjectIndexFind answers bySubject from the subject index: for each
// subject matching filter, its first record at or after from (or its last
// record); the lowest (or highest) sequence wins.
func (tx *Tx) subjectIndexFind(s *streamRef, from uint64, filter string, last bool) (SeqEntry, bool, error) {
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
	if !SubjectHasWildcard(filter) {
		err = consider([]byte(filter))
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
			if SubjectMatches(filter, subject) {
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
	f, ok, err := tx.findEntry(s, bestID)
	if err != nil || !ok {
		return SeqEntry{}, false, err
	}
	sets, err := tx.fieldSets(s)
	if err != nil {
		return SeqEntry{}, false, err
	}
	e, err := decodeSeqEntry(s, sets, bestID, f.v)
	return e, err == nil, err
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

// entrySubject returns the value of the first field named "subject".
func entrySubject(fv [][]byte) ([]byte, bool) {
	for i := 0; i+1 < len(fv); i += 2 {
		if string(fv[i]) == "subject" {
			return fv[i+1], true
		}
	}
	return nil, false
}

// msgBytes is what an entry of the stream at key adds to SeqState.Bytes:
// the bytes JetStream's file store counts for the message the entry maps
// to (nats-server's fileStoreMsgSize), so that a NATS client reads the
// stream's size as it would a real JetStream stream's: a 22-byte record
// header, the subject (field "subject", else the key), the header block
// with its 4-byte length when the entry has header fields, the payload
// (field "data") and an 8-byte checksum. The header block is
// "NATS/1.0\r\n", a "name: value\r\n" line per other field whose name
// can be a header key (ValidHeaderKey), then "\r\n".
func msgBytes(key []byte, fv [][]byte) uint64 {
	headers := 0
	subject, data, ok := MessageParts(fv, func(k, v []byte) {
		headers += len(k) + len(": ") + len(v) + len("\r\n")
	})
	if !ok {
		subject = key
	}
	n := 22 + len(subject) + len(data) + 8
	if headers > 0 {
		n += 4 + len("NATS/1.0\r\n") + headers + len("\r\n")
	}
	return uint64(n)
}

// MessageParts splits an entry's fields into the parts of the NATS
// message it maps to: the first "data" field is the payload, the first
// "subject" field the subject (hasSubject false: none), and every other
// field whose name can be a header key (ValidHeaderKey) a header, passed
// to header in order. The bridge renders messages by this rule and
// msgBytes counts them by it.
func MessageParts(fv [][]byte, header func(k, v []byte)) (subject, data []byte, hasSubject bool) {
	seenData := false
	for i := 0; i+1 < len(fv); i += 2 {
		k, v := fv[i], fv[i+1]
		switch {
		case !seenData && string(k) == "data":
			seenData, data = true, v
		case !hasSubject && string(k) == "subject":
			hasSubject, subject = true, v
		case ValidHeaderKey(k):
			header(k, v)
		}
	}
	return subject, data, hasSubject
}

// ValidHeaderKey reports whether a field name can be a NATS header key
// (nats.go's rule: printable ASCII without ':'); the fields that cannot
// are left out of the message an entry maps to.
func ValidHeaderKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if c < '!' || c > '~' || c == ':' {
			return false
		}
	}
	return true
}

// SubjectHasWildcard reports whether filter has a "*" or ">" token.
func SubjectHasWildcard(filter string) bool {
	for tok := range strings.SplitSeq(filter, ".") {
		if tok == "*" || tok == ">" {
			return true
		}
	}
	return false
}

// SubjectMatches reports whether subject matches the NATS subject filter:
// tokens are separated by '.', "*" matches any one token and a final ">"
// matches one or more tokens.
func SubjectMatches(filter string, subject []byte) bool {
	for {
		ftok, frest, fmore := strings.Cut(filter, ".")
		if len(subject) == 0 {
			return false
		}
		stok, srest, smore := bytes.Cut(subject, []byte{'.'})
		switch {
		case ftok == ">" && !fmore:
			return true
		case ftok == "*" || ftok == string(stok):
		default:
			return false
		}
		if !fmore || !smore {
			return fmore == smore
		}
		filter, subject = frest, srest
	}
}
