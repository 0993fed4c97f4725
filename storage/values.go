package storage

import (
	"encoding/binary"
	"errors"
)

// Value layouts
//
//	Meta   | type:u8 | version:uvarint | expire-at:uvarint (unix ms, 0 = none) | body ...
//	Entry  | pairs:uvarint | (len:uvarint bytes)... — field, value, field, value ...
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

// AppendEntryValue appends the encoding of an entry's field-value pairs;
// fv holds field, value, field, value...
func AppendEntryValue(dst []byte, fv [][]byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(fv)/2))
	for _, s := range fv {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// DecodeEntryValue decodes an entry value, appending field, value, ... to
// dst. The returned slices alias b.
func DecodeEntryValue(b []byte, dst [][]byte) ([][]byte, error) {
	pairs, n := binary.Uvarint(b)
	if n <= 0 || pairs > uint64(len(b)) {
		return dst, ErrCorrupt
	}
	b = b[n:]
	for i := uint64(0); i < 2*pairs; i++ {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return dst, ErrCorrupt
		}
		dst = append(dst, b[n:n+int(l)])
		b = b[n+int(l):]
	}
	if len(b) != 0 {
		return dst, ErrCorrupt
	}
	return dst, nil
}
