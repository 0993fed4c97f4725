package storage

import (
	"encoding/binary"
	"errors"
)

// Key layout
//
// Every Pebble key starts with a one-byte tag. Integers are big-endian and
// fixed width so that byte order is numeric order; Redis key names (and
// group/consumer names) are preceded by their length as a uint32 so that
// stream "a" is never a prefix of stream "ab".
//
//	store record   | 0x01 | name ...                                        |  value: record-specific
//	metadata       | 0x10 | db:u16 | klen:u32 | key |                        |  value: Meta (meta.go)
//	data           | 0x11 | db:u16 | klen:u32 | key | version:u64 | kind:u8 | ... (below)
//	  entry        |                      ... kind=0x01 | ms:u64 | seq:u64  |  value: entry fields (values.go)
//	  node         |                      ... kind=0x02 | ms:u64 | seq:u64  |  value: stream node model (master ID)
//	  group        |                      ... kind=0x03 | glen:u32 | group  |  reserved: consumer groups
//	  consumer     |                      ... kind=0x04 | glen | group | clen:u32 | consumer
//	  pel by id    |                      ... kind=0x05 | glen | group | ms | seq
//	  pel by owner |                      ... kind=0x06 | glen | group | clen | consumer | ms | seq
//	  seq index    |                      ... kind=0x07 | n:u64             |  reserved: Nth entry ever added → ID
//	  subject idx  |                      ... kind=0x08 | slen:u32 | subject | n:u64
//	garbage        | 0x20 | version:u64 |                                   |  value: db:u16 | klen:u32 | key
//	expiry index   | 0x21 | at:u64 (unix ms) | db:u16 | klen:u32 | key      |  value: empty
//	repl log       | 0x30 | offset:u64 |                                    |  reserved: replication log
//
// The version is unique per incarnation of a Redis key: DEL, FLUSHDB,
// overwrite and RENAME give the name a new version (or none), so readers,
// who always go through the metadata record, never see the old data. The
// old data range is recorded under "garbage" in the same batch and dropped
// later with one range deletion.
//
// Tag and kind bytes are on-disk format: they are never renumbered or
// reused. keys_test.go freezes them with golden bytes.
const (
	tagStore   byte = 0x01
	tagMeta    byte = 0x10
	tagData    byte = 0x11
	tagGarbage byte = 0x20
	tagExpiry  byte = 0x21
	tagReplLog byte = 0x30
)

// Kind distinguishes the records stored under one key version.
type Kind byte

// Kinds of data records. Never renumbered.
const (
	KindEntry         Kind = 0x01
	KindNode          Kind = 0x02
	KindGroup         Kind = 0x03
	KindConsumer      Kind = 0x04
	KindPELByID       Kind = 0x05
	KindPELByConsumer Kind = 0x06
	KindSeqIndex      Kind = 0x07
	KindSubjectIndex  Kind = 0x08
)

// ErrBadKey is returned when a key does not have the expected layout.
var ErrBadKey = errors.New("storage: malformed key")

// Store record names.
var (
	recordFormat      = []byte("format")
	recordVersionHigh = []byte("version-high")
)

func appendName(dst, name []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(name)))
	return append(dst, name...)
}

func storeKey(name []byte) []byte {
	return append([]byte{tagStore}, name...)
}

// AppendMetaKey appends the metadata key of Redis key `key` in database db.
func AppendMetaKey(dst []byte, db int, key []byte) []byte {
	dst = append(dst, tagMeta)
	dst = binary.BigEndian.AppendUint16(dst, uint16(db))
	return appendName(dst, key)
}

// DecodeMetaKey returns the database and Redis key of a metadata key. The
// returned key aliases k.
func DecodeMetaKey(k []byte) (db int, key []byte, err error) {
	if len(k) < 7 || k[0] != tagMeta {
		return 0, nil, ErrBadKey
	}
	db = int(binary.BigEndian.Uint16(k[1:]))
	n := binary.BigEndian.Uint32(k[3:])
	if uint64(len(k)-7) != uint64(n) {
		return 0, nil, ErrBadKey
	}
	return db, k[7:], nil
}

// MetaPrefix returns the bounds [lower, upper) of the metadata keys of one
// database.
func MetaPrefix(db int) (lower, upper []byte) {
	lower = binary.BigEndian.AppendUint16([]byte{tagMeta}, uint16(db))
	return lower, binary.BigEndian.AppendUint16([]byte{tagMeta}, uint16(db+1))
}

// DataPrefixDB returns the bounds [lower, upper) of every data record of one
// database (all keys, all versions).
func DataPrefixDB(db int) (lower, upper []byte) {
	lower = binary.BigEndian.AppendUint16([]byte{tagData}, uint16(db))
	return lower, binary.BigEndian.AppendUint16([]byte{tagData}, uint16(db+1))
}

// AllKeyspace returns bounds covering the metadata, data, garbage and expiry
// records of every database: what FLUSHALL removes.
func AllKeyspace() (lower, upper []byte) {
	return []byte{tagMeta}, []byte{tagExpiry + 1}
}

// AppendVersionPrefix appends the prefix shared by every data record of one
// version of a key.
func AppendVersionPrefix(dst []byte, db int, key []byte, version uint64) []byte {
	dst = append(dst, tagData)
	dst = binary.BigEndian.AppendUint16(dst, uint16(db))
	dst = appendName(dst, key)
	return binary.BigEndian.AppendUint64(dst, version)
}

// VersionBounds returns [lower, upper) covering every data record of one
// version of a key.
func VersionBounds(db int, key []byte, version uint64) (lower, upper []byte) {
	lower = AppendVersionPrefix(nil, db, key, version)
	upper = AppendVersionPrefix(nil, db, key, version+1)
	return lower, upper
}

// AppendEntryKey appends the key of stream entry ms-seq.
func AppendEntryKey(dst []byte, db int, key []byte, version, ms, seq uint64) []byte {
	dst = AppendVersionPrefix(dst, db, key, version)
	dst = append(dst, byte(KindEntry))
	dst = binary.BigEndian.AppendUint64(dst, ms)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// AppendNodeKey appends the key of the stream node whose master ID is ms-seq.
func AppendNodeKey(dst []byte, db int, key []byte, version, ms, seq uint64) []byte {
	dst = AppendVersionPrefix(dst, db, key, version)
	dst = append(dst, byte(KindNode))
	dst = binary.BigEndian.AppendUint64(dst, ms)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// KindBounds returns [lower, upper) covering every record of one kind under
// one version of a key.
func KindBounds(db int, key []byte, version uint64, kind Kind) (lower, upper []byte) {
	p := AppendVersionPrefix(nil, db, key, version)
	lower = append(append([]byte(nil), p...), byte(kind))
	upper = append(p, byte(kind)+1)
	return lower, upper
}

// DecodeIDSuffix returns the (ms, seq) pair that ends an entry or node key.
func DecodeIDSuffix(k []byte) (ms, seq uint64, err error) {
	if len(k) < 16 {
		return 0, 0, ErrBadKey
	}
	t := k[len(k)-16:]
	return binary.BigEndian.Uint64(t), binary.BigEndian.Uint64(t[8:]), nil
}

// AppendGarbageKey appends the key recording that a key version's data is
// to be dropped.
func AppendGarbageKey(dst []byte, version uint64) []byte {
	dst = append(dst, tagGarbage)
	return binary.BigEndian.AppendUint64(dst, version)
}

// GarbageBounds returns [lower, upper) covering every garbage record.
func GarbageBounds() (lower, upper []byte) {
	return []byte{tagGarbage}, []byte{tagGarbage + 1}
}

// EncodeGarbageValue encodes which key a garbage record refers to.
func EncodeGarbageValue(db int, key []byte) []byte {
	v := binary.BigEndian.AppendUint16(nil, uint16(db))
	return appendName(v, key)
}

// DecodeGarbage returns the data range a garbage record stands for.
func DecodeGarbage(k, v []byte) (lower, upper []byte, err error) {
	if len(k) != 9 || k[0] != tagGarbage || len(v) < 6 {
		return nil, nil, ErrBadKey
	}
	version := binary.BigEndian.Uint64(k[1:])
	db := int(binary.BigEndian.Uint16(v))
	n := binary.BigEndian.Uint32(v[2:])
	if uint64(len(v)-6) != uint64(n) {
		return nil, nil, ErrBadKey
	}
	lower, upper = VersionBounds(db, v[6:], version)
	return lower, upper, nil
}

// AppendExpiryKey appends the expiry index key of a key expiring at unix
// milliseconds at.
func AppendExpiryKey(dst []byte, at int64, db int, key []byte) []byte {
	dst = append(dst, tagExpiry)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at))
	dst = binary.BigEndian.AppendUint16(dst, uint16(db))
	return appendName(dst, key)
}

// ExpiryBounds returns [lower, upper) covering the expiry index entries of
// keys expiring at or before unix milliseconds now.
func ExpiryBounds(now int64) (lower, upper []byte) {
	return []byte{tagExpiry}, binary.BigEndian.AppendUint64([]byte{tagExpiry}, uint64(now)+1)
}

// DecodeExpiryKey parses an expiry index key.
func DecodeExpiryKey(k []byte) (at int64, db int, key []byte, err error) {
	if len(k) < 15 || k[0] != tagExpiry {
		return 0, 0, nil, ErrBadKey
	}
	at = int64(binary.BigEndian.Uint64(k[1:]))
	db = int(binary.BigEndian.Uint16(k[9:]))
	n := binary.BigEndian.Uint32(k[11:])
	if uint64(len(k)-15) != uint64(n) {
		return 0, 0, nil, ErrBadKey
	}
	return at, db, k[15:], nil
}
