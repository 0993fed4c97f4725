package bridge

import (
	"errors"

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
		e, ok, err = notStream(tx.NextBySubject(0, []byte(name), from, filter))
		return err
	})
	return e, ok, err
}

// LastBySubject implements Store.
func (s EngineStore) LastBySubject(name string, filter string) (e stream.SeqEntry, ok bool, err error) {
	err = s.Engine.View(func(tx *stream.Tx) error {
		e, ok, err = notStream(tx.LastBySubject(0, []byte(name), filter))
		return err
	})
	return e, ok, err
}

// Streams implements Store. It walks SCAN pages, each in its own read
// transaction, so a long keyspace does not pin one snapshot.
func (s EngineStore) Streams(fn func(name []byte)) error {
	var cursor uint64
	for {
		var keys [][]byte
		err := s.Engine.View(func(tx *stream.Tx) error {
			var err error
			cursor, keys, err = tx.Scan(0, cursor, nil, 1000, "stream")
			return err
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			fn(k)
		}
		if cursor == 0 {
			return nil
		}
	}
}
