package storage

import (
	"encoding/binary"
	"errors"
)

// Value layouts
//
//	Meta   | type:u8 | version:uvarint | expire-at:uvarint (unix ms, 0 = none) | body ...
//	Entry  | flags:u8 | seq:uvarint | pairs:uvarint | (len:uvarint bytes)...  — field, value, field, value ...
//	       | flags:u8 | seq:uvarint | set:uvarint | (len:uvarint bytes)...    — values only (flags&1)
//	Fields | count:uvarint | (len:uvarint bytes)...                          — a field set
//	Record | 0x80 | (ms-delta:uvarint | seq:uvarint | len:uvarint | Entry)...  — several entries
//
// An entry record's value is one Entry, whose ID is the record's key, or
// a Record of several, in ID order, keyed by an ID at or before the first
// one's. A Record gives each entry's ID from the one before it (the key's,
// for the first): ms-delta is the difference of the milliseconds, and seq
// the difference of the sequence numbers when ms-delta is 0, else the
// sequence number itself. Packing entries into one record saves Pebble a
// key per entry: in the memtable, in every flush and in every compaction
// (BenchmarkEntriesPerRecord). Only a stream whose metadata says it is
// packed has Records (package stream), and a Record never holds entries
// of two of the stream's nodes.
//
// An entry whose field names equal one of its stream's recorded field sets
// stores only its values and the set's id (flag 1), as Redis leaves out the
// field names of an entry whose fields equal its node's master fields. seq
// is the entry's sequence (keys.go).
//
// A Meta body is owned by the key's type: the raw value for a string, the
// stream's metadata for a stream (encoded by package stream).
//
// Type bytes are on-disk format and never reused.

// ErrCorrupt is returned when a stored value cannot be decoded.
var ErrCorrupt = errors.New("storage: corrupt value")

// KeyType is the Redis type of a key.
type KeyType byte

// Key types. Never renumbered.
const (
	TypeString KeyType = 1
	TypeStream KeyType = 2
)

// Meta is the metadata record of one Redis key.
type Meta struct {
	Type     KeyType
	Version  uint64
	ExpireAt int64 // unix milliseconds; 0 means no expiry
	Body     []byte
}

// AppendMeta appends the encoding of m.
func AppendMeta(dst []byte, m *Meta) []byte {
	dst = append(dst, byte(m.Type))
	dst = binary.AppendUvarint(dst, m.Version)
	dst = binary.AppendUvarint(dst, uint64(m.ExpireAt))
	return append(dst, m.Body...)
}

// DecodeMeta decodes a metadata record. Body aliases b.
func DecodeMeta(b []byte) (Meta, error) {
	var m Meta
	if len(b) < 1 {
		return m, ErrCorrupt
	}
	m.Type = KeyType(b[0])
	b = b[1:]
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return m, ErrCorrupt
	}
	m.Version = v
	b = b[n:]
	e, n := binary.Uvarint(b)
	if n <= 0 {
		return m, ErrCorrupt
	}
	m.ExpireAt = int64(e)
	m.Body = b[n:]
	return m, nil
}

// entryFlagFieldSet marks an entry value that holds values only.
const entryFlagFieldSet = 1

// AppendEntryValue appends the encoding of an entry with sequence seq and
// field-value pairs fv (field, value, field, value...).
func AppendEntryValue(dst []byte, seq uint64, fv [][]byte) []byte {
	dst = append(dst, 0)
	dst = binary.AppendUvarint(dst, seq)
	dst = binary.AppendUvarint(dst, uint64(len(fv)/2))
	for _, s := range fv {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// AppendEntryValueSet appends the encoding of an entry whose field names
// are field set set: only the values of fv (field, value, ...) are kept.
func AppendEntryValueSet(dst []byte, seq, set uint64, fv [][]byte) []byte {
	dst = append(dst, entryFlagFieldSet)
	dst = binary.AppendUvarint(dst, seq)
	dst = binary.AppendUvarint(dst, set)
	for i := 1; i < len(fv); i += 2 {
		dst = binary.AppendUvarint(dst, uint64(len(fv[i])))
		dst = append(dst, fv[i]...)
	}
	return dst
}

// EntryHeader is the part of an entry value before its fields.
type EntryHeader struct {
	Seq uint64
	Set uint64 // field set id; 0 when the value holds the field names
}

// DecodeEntryHeader decodes the header of an entry value and returns the
// rest.
func DecodeEntryHeader(b []byte) (h EntryHeader, rest []byte, err error) {
	if len(b) < 1 || b[0]&^entryFlagFieldSet != 0 {
		return h, nil, ErrCorrupt
	}
	flags := b[0]
	seq, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return h, nil, ErrCorrupt
	}
	h.Seq = seq
	b = b[1+n:]
	if flags&entryFlagFieldSet != 0 {
		set, n := binary.Uvarint(b)
		if n <= 0 || set == 0 {
			return h, nil, ErrCorrupt
		}
		h.Set = set
		b = b[n:]
	}
	return h, b, nil
}

// FieldSets resolves a stream's field set ids to field names.
type FieldSets interface {
	FieldSet(id uint64) ([][]byte, error)
}

// DecodeEntryValue decodes an entry value, appending field, value, ... to
// dst. sets resolves a field set id to its field names (it is not asked
// for values that hold their names). Values alias b; field names alias b
// or what sets returned.
func DecodeEntryValue(b []byte, sets FieldSets, dst [][]byte) (EntryHeader, [][]byte, error) {
	h, b, err := DecodeEntryHeader(b)
	if err != nil {
		return h, dst, err
	}
	if h.Set == 0 {
		pairs, n := binary.Uvarint(b)
		if n <= 0 || pairs > uint64(len(b)) {
			return h, dst, ErrCorrupt
		}
		dst, err = decodeStrings(b[n:], 2*pairs, nil, dst)
		return h, dst, err
	}
	if sets == nil {
		return h, dst, ErrCorrupt
	}
	names, err := sets.FieldSet(h.Set)
	if err != nil {
		return h, dst, err
	}
	dst, err = decodeStrings(b, uint64(len(names)), names, dst)
	return h, dst, err
}

// decodeStrings appends count length-prefixed strings of b to dst, each
// preceded by the next of names when names is not nil. b must hold nothing
// else.
func decodeStrings(b []byte, count uint64, names [][]byte, dst [][]byte) ([][]byte, error) {
	for i := uint64(0); i < count; i++ {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return dst, ErrCorrupt
		}
		if names != nil {
			dst = append(dst, names[i])
		}
		dst = append(dst, b[n:n+int(l)])
		b = b[n+int(l):]
	}
	if len(b) != 0 {
		return dst, ErrCorrupt
	}
	return dst, nil
}

// AppendFieldSet appends the encoding of a field set.
func AppendFieldSet(dst []byte, names [][]byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(names)))
	for _, s := range names {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// DecodeFieldSet decodes a field set. The result does not alias b.
func DecodeFieldSet(b []byte) ([][]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return nil, ErrCorrupt
	}
	names, err := decodeStrings(append([]byte(nil), b[n:]...), count, nil, make([][]byte, 0, count))
	if err != nil {
		return nil, err
	}
	return names, nil
}

// entryFlagRecord marks a Record value. DecodeEntryHeader refuses it: an
// Entry's flags never have this bit.
const entryFlagRecord = 0x80

// IsEntryRecord reports whether v, an entry record's value, is a Record
// of several entries rather than one Entry.
func IsEntryRecord(v []byte) bool { return len(v) > 0 && v[0] == entryFlagRecord }

// AppendRecordStart appends the start of a Record, to which
// AppendRecordEntry adds the entries.
func AppendRecordStart(dst []byte) []byte { return append(dst, entryFlagRecord) }

// AppendRecordEntry appends to a Record the entry ms-seq, whose value (an
// Entry) is entry. prevMs-prevSeq is the ID of the entry before it in the
// Record, or the record's key for the first; ms-seq must not be below it,
// nor equal to it but for the first.
func AppendRecordEntry(dst []byte, prevMs, prevSeq, ms, seq uint64, entry []byte) []byte {
	d := ms - prevMs
	dst = binary.AppendUvarint(dst, d)
	if d == 0 {
		dst = binary.AppendUvarint(dst, seq-prevSeq)
	} else {
		dst = binary.AppendUvarint(dst, seq)
	}
	dst = binary.AppendUvarint(dst, uint64(len(entry)))
	return append(dst, entry...)
}

// RecordEntries walks the entries of a Record.
type RecordEntries struct {
	b       []byte
	ms, seq uint64
	first   bool
}

// NewRecordEntries returns a walk of the Record v, whose key ends with the
// ID keyMs-keySeq.
func NewRecordEntries(keyMs, keySeq uint64, v []byte) (RecordEntries, error) {
	if !IsEntryRecord(v) {
		return RecordEntries{}, ErrCorrupt
	}
	return RecordEntries{b: v[1:], ms: keyMs, seq: keySeq, first: true}, nil
}

// Next returns the next entry's ID and value (aliasing the Record), ok
// false after the last.
func (r *RecordEntries) Next() (ms, seq uint64, entry []byte, ok bool, err error) {
	if len(r.b) == 0 {
		return 0, 0, nil, false, nil
	}
	d, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, 0, nil, false, ErrCorrupt
	}
	b := r.b[n:]
	s, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, false, ErrCorrupt
	}
	b = b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return 0, 0, nil, false, ErrCorrupt
	}
	ms, seq = r.ms+d, s
	if d == 0 {
		seq = r.seq + s
		if (s == 0 && !r.first) || seq < r.seq {
			return 0, 0, nil, false, ErrCorrupt
		}
	} else if ms < r.ms {
		return 0, 0, nil, false, ErrCorrupt
	}
	r.ms, r.seq, r.first = ms, seq, false
	r.b = b[n+int(l):]
	return ms, seq, b[n : n+int(l)], true, nil
}
