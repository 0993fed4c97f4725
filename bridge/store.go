package bridge

import (
	"errors"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// Store is what the bridge reads: streams seen through the sequence view
// (stream/seqread.go). Names are Redis keys of logical database 0. A key
// that exists but is not a stream reports ok false, as a missing one:
// to a NATS client it is simply not a stream.
type Store interface {
	// State describes stream name; ok is false when there is none.
	State(name string) (st stream.SeqState, ok bool, err error)
	// BySeq returns the live entry with sequence seq.
	BySeq(name string, seq uint64) (e stream.SeqEntry, ok bool, err error)
	// NextBySubject returns the first live entry with sequence >= from
	// whose subject matches filter (NATS wildcards; "" matches all).
	NextBySubject(name string, from uint64, filter string) (e stream.SeqEntry, ok bool, err error)
	// LastBySubject returns the live entry with the highest sequence
	// whose subject matches filter.
	LastBySubject(name string, filter string) (e stream.SeqEntry, ok bool, err error)
	// Scan calls fn with every live entry whose sequence is >= from, in
	// sequence order, until fn returns false.
	Scan(name string, from uint64, fn func(e stream.SeqEntry) bool) error
	// SeqFromTime is JetStream's GetSeqFromTime: the sequence of the
	// first live entry whose time is at or after t, or the last sequence
	// + 1 when there is none.
	SeqFromTime(name string, t time.Time) (seq uint64, ok bool, err error)
	// Subjects returns the distinct subjects of the live entries, in no
	// order, when they can be read cheaply; complete is false when they
	// were not (more than max, or a walk too long).
	Subjects(name string, max int) (subjects []string, complete bool, err error)
	// Streams calls fn with the name of every stream, in no order; the
	// slice is only valid during the call.
	Streams(fn func(name []byte)) error
}

// EngineStore reads an engine's database 0, one read transaction per call.
type EngineStore struct {
	Engine *stream.Engine
}

var _ Store = EngineStore{}

// notStream turns ErrWrongType into "no such stream".
func notStream[T any](v T, ok bool, err error) (T, bool, error) {
	if errors.Is(err, stream.ErrWrongType) {
		var zero T
		return zero, false, nil
	}
	return v, ok, err
}

// State implements Store.
func (s EngineStore) State(name string) (st stream.SeqState, ok bool, err error) {
	err = s.Engine.View(func(tx *stream.Tx) error {
		st, ok, err = notStream(tx.SeqState(0, []byte(name)))
		return err
	})
	return st, ok, err
}

// BySeq implements Store.
func (s EngineStore) BySeq(name string, seq uint64) (e stream.SeqEntry, ok bool, err error) {
	err = s.Engine.View(func(tx *stream.Tx) error {
		e, ok, err = notStream(tx.EntryBySeq(0, []byte(name), seq))
		return err
	})
	return e, ok, err
}

// NextBySubject implements Store.
func (s EngineStore) NextBySubject(name string, from uint64, filter string) (e stream.SeqEntry, ok bool, err error) {
	err = s.Engine.View(func(tx *stream.Tx) error {
		e, ok, err = notStream(tx.NextBySubject(0, []byte(name), from, engineFilter(filter)))
		return err
	})
	return e, ok, err
}

// LastBySubject implements Store.
func (s EngineStore) LastBySubject(name string, filter string) (e stream.SeqEntry, ok bool, err error) {
	err = s.Engine.View(func(tx *stream.Tx) error {
		e, ok, err = notStream(tx.LastBySubject(0, []byte(name), engineFilter(filter)))
		return err
	})
	return e, ok, err
}

// Scan implements Store, in one read transaction.
func (s EngineStore) Scan(name string, from uint64, fn func(e stream.SeqEntry) bool) error {
	return s.Engine.View(func(tx *stream.Tx) error {
		err := tx.SeqScan(0, []byte(name), from, fn)
		if errors.Is(err, stream.ErrWrongType) {
			return nil
		}
		return err
	})
}

// SeqFromTime implements Store. An entry's time is its ID's
// milliseconds, so the first entry at or after t is the first whose ID
// is at or after t rounded up to a millisecond.
func (s EngineStore) SeqFromTime(name string, t time.Time) (seq uint64, ok bool, err error) {
	var id stream.ID
	if ms := t.UnixMilli(); ms >= 0 {
		id.Ms = uint64(ms)
		if time.UnixMilli(ms).Before(t) {
			id.Ms++
		}
	}
	err = s.Engine.View(func(tx *stream.Tx) error {
		seq, ok, err = notStream(tx.SeqFromID(0, []byte(name), id))
		return err
	})
	return seq, ok, err
}

// subjectWalkLimit is the largest stream whose entries Subjects walks
// when only some of them have a subject field (no subject index).
const subjectWalkLimit = 10000

// Subjects implements Store.
func (s EngineStore) Subjects(name string, max int) (subjects []string, complete bool, err error) {
	err = s.Engine.View(func(tx *stream.Tx) error {
		bs, c, err := tx.SeqSubjects(0, []byte(name), max, subjectWalkLimit)
		if errors.Is(err, stream.ErrWrongType) {
			return nil
		}
		for _, b := range bs {
			subjects = append(subjects, string(b))
		}
		complete = c
		return err
	})
	return subjects, complete, err
}

// Streams implements Store. It reads stream metadata records, a page
// per read transaction, so a long keyspace does not pin one snapshot.
func (s EngineStore) Streams(fn func(name []byte)) error {
	const pageSize = 1000
	var after []byte
	for {
		var keys [][]byte
		err := s.Engine.View(func(tx *stream.Tx) error {
			return tx.StreamKeys(0, after, func(k []byte) bool {
				keys = append(keys, append([]byte(nil), k...))
				return len(keys) < pageSize
			})
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			fn(k)
		}
		if len(keys) < pageSize {
			return nil
		}
		after = keys[len(keys)-1]
	}
}
