package storage

import (
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
)

// What replication needs from the store: a committed batch's bytes
// (Pebble's batch representation, which is stable and applies as it is on
// another store), applying such bytes atomically, a consistent view of
// the whole store for a full sync, wiping the store for one, and the
// record of which primary history and offset a replica's data follows
// (recordReplState, keys.go). That record is written in the same batch as
// the data it describes, so after a crash it never claims more (or less)
// than the store holds.

// ErrBadRepr is returned for bytes that are not a batch representation.
var ErrBadRepr = errors.New("storage: malformed batch representation")

// Repr returns the batch's representation: its header and records as
// Pebble would write them to its WAL. It aliases the batch's buffer, so it
// is valid only until the batch is closed or written again. It seals the
// batch (batch.go): only Apply, Commit or Close may follow.
func (b *Batch) Repr() []byte {
	if err := b.seal(); err != nil {
		// The appends are records this batch wrote: they cannot be
		// malformed.
		panic("storage: sealing a batch: " + err.Error())
	}
	return b.b.Repr()
}

// ApplyRepr applies the batch representation repr atomically, and in the
// same batch sets the replication state to state (nil leaves it). It waits
// for durability as Commit does.
func (db *DB) ApplyRepr(repr, state []byte) error {
	if len(repr) < batchrepr.HeaderLen {
		return ErrBadRepr
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	// SetRepr keeps the slice: give it a copy that the batch may own and
	// append the state record to.
	if err := b.SetRepr(append(make([]byte, 0, len(repr)+len(state)+64), repr...)); err != nil {
		return err
	}
	if state != nil {
		if err := b.Set(storeKey(recordReplState), state, nil); err != nil {
			return err
		}
	}
	if b.Empty() {
		return nil
	}
	if err := db.apply(b); err != nil {
		return err
	}
	return db.afterApply(1)
}

// ReplState reads the replication state record; ok is false if there is
// none (a store that never followed a primary, or whose full sync did not
// finish).
func (db *DB) ReplState() (state []byte, ok bool, err error) {
	return db.Get(storeKey(recordReplState))
}

// SetReplState writes the replication state record (nil deletes it) and
// waits for durability.
func (db *DB) SetReplState(state []byte) error {
	b := db.NewBatch()
	var err error
	if state == nil {
		err = b.Delete(storeKey(recordReplState))
	} else {
		err = b.Set(storeKey(recordReplState), state)
	}
	if err != nil {
		b.Close()
		return err
	}
	return b.Commit()
}

// ReprOp is one record of a batch representation, as ReprRecords reports
// it.
type ReprOp uint8

// Record kinds of a batch representation.
const (
	ReprSet ReprOp = iota
	ReprDelete
	// ReprDeleteRange: every key in [Key, End) is deleted.
	ReprDeleteRange
	// ReprOther: a record kind Eddy does not write (merge, range keys, log
	// data); whoever meets it must assume anything changed.
	ReprOther
)

// ReprRecords calls fn for each record of repr, in order, with the value
// of a Set and the end of a DeleteRange in val. Key and val alias repr.
func ReprRecords(repr []byte, fn func(op ReprOp, key, val []byte)) error {
	if len(repr) < batchrepr.HeaderLen {
		return ErrBadRepr
	}
	r := batchrepr.Read(repr)
	for {
		kind, ukey, value, ok, err := r.Next()
		if err != nil {
			return ErrBadRepr
		}
		if !ok {
			return nil
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			fn(ReprSet, ukey, value)
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete, pebble.InternalKeyKindDeleteSized:
			fn(ReprDelete, ukey, nil)
		case pebble.InternalKeyKindRangeDelete:
			fn(ReprDeleteRange, ukey, value)
		case pebble.InternalKeyKindLogData:
		default:
			fn(ReprOther, ukey, value)
		}
	}
}

// KeyClass says what a store key is, for whoever must invalidate state
// derived from it.
type KeyClass uint8

// Key classes.
const (
	ClassOther    KeyClass = iota
	ClassMeta              // a metadata record: DecodeMetaKey applies
	ClassGroup             // a consumer-group record: group, consumer or PEL
	ClassCounts            // a key-counts record
	ClassVersions          // the version high-water mark
)

// ClassifyKey returns the class of store key k.
func ClassifyKey(k []byte) KeyClass {
	if len(k) == 0 {
		return ClassOther
	}
	switch k[0] {
	case tagData:
		if IsMetaKey(k) {
			return ClassMeta
		}
		// tag | db:u16 | klen:u32 | key | version:u64 | kind:u8 | ...
		if len(k) < 7 {
			return ClassOther
		}
		n := uint64(binary.BigEndian.Uint32(k[3:]))
		at := 7 + n + 8
		if uint64(len(k)) <= at {
			return ClassOther
		}
		switch Kind(k[at]) {
		case KindGroup, KindConsumer, KindPELByID, KindPELByConsumer:
			return ClassGroup
		}
	case tagStore:
		name := k[1:]
		switch {
		case len(name) >= len(recordKeyCounts) && string(name[:len(recordKeyCounts)]) == string(recordKeyCounts):
			return ClassCounts
		case string(name) == string(recordVersionHigh):
			return ClassVersions
		}
	}
	return ClassOther
}

// ForEach calls fn for every record a replica copies, in key order: all
// of the store but its format and replication state records, which are
// the store's own. Key and value are valid only during the call. An error
// from fn stops the walk and is returned.
func (s *Snapshot) ForEach(fn func(key, value []byte) error) error {
	it, err := s.s.NewIter(nil)
	if err != nil {
		return err
	}
	format, state := storeKey(recordFormat), storeKey(recordReplState)
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if string(k) == string(format) || string(k) == string(state) {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		if err := fn(k, v); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// WipeForSync deletes every record but the format record, in b: a replica
// about to load a primary's snapshot starts from nothing. The replication
// state goes too, so that a sync that does not finish is never taken for
// a complete one.
func (b *Batch) WipeForSync() error {
	format := storeKey(recordFormat)
	if err := b.DeleteRange([]byte{0}, format); err != nil {
		return err
	}
	return b.DeleteRange(append(format, 0), []byte{0xff, 0xff, 0xff, 0xff})
}

// ReplStateKey returns the key of the replication state record, for a
// batch that writes it with the data it describes.
func ReplStateKey() []byte { return storeKey(recordReplState) }

// SyncWAL waits until everything applied so far is on disk, whatever the
// sync mode: a replica's full sync is too costly to lose to a crash.
func (db *DB) SyncWAL() error { return db.syncer.wait(0, false) }
