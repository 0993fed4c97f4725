package storage

import (
	"encoding/binary"
	"errors"

	"github.com/cespare/xxhash/v2"
)

// Key layout
//
// Every Pebble key starts with a one-byte tag. Integers are big-endian and
// fixed width so that byte order is numeric order; Redis key names (and
// group/consumer names) are preceded by their length as a uint32 so that
// stream "a" is never a prefix of stream "ab".
//
//	store record   | 0x01 | name ...                                        |  value: record-specific
//	  key counts   | 0x01 | "keys" | db:u16                                 |  value: keys:u64 | expires:u64
//	  key index    | 0x01 | "scan-index"                                    |  value: "1": counts and scan index cover every key
//	  repl state   | 0x01 | "repl-state"                                    |  value: a replica's primary history and offset (repl.go)
//	  journal      | 0x01 | "journal"                                       |  value: index:u64 — the last journal batch applied (journal.go)
//	metadata       | 0x11 | db:u16 | klen:u32 | key | 0xFFFFFFFFFFFFFFFF      |  value: Meta (meta.go)
//	data           | 0x11 | db:u16 | klen:u32 | key | version:u64 | kind:u8 | ... (below)
//	  entry        |                      ... kind=0x01 | ms:u64 | seq:u64  |  value: the entry, or a Record of several from ms-seq on (values.go)
//	  node         |                      ... kind=0x02 | ms:u64 | seq:u64  |  value: stream node model (master ID)
//	  group        |                      ... kind=0x03 | glen:u32 | group  |  value: group record (stream/group_store.go)
//	  consumer     |                      ... kind=0x04 | glen | group | clen:u32 | consumer  |  value: consumer record
//	  pel by id    |                      ... kind=0x05 | glen | group | ms:u64 | seq:u64     |  value: owner, delivery time and count
//	  pel by owner |                      ... kind=0x06 | glen | group | clen | consumer | ms | seq  |  value: empty (index)
//	  seq index    |                      ... kind=0x07 | n:u64             |  value: ms:u64 | seq:u64 — master ID of the node whose first entry has sequence n
//	  subject idx  |                      ... kind=0x08 | slen:u32 | subject | n:u64  |  value: ms:u64 | seq:u64 — ID of the entry with sequence n
//	  field set    |                      ... kind=0x09 | id:u64            |  value: a field set (values.go) that entries refer to by id
//	garbage        | 0x20 | version:u64 |                                   |  value: db:u16 | klen:u32 | key
//	expiry index   | 0x21 | at:u64 (unix ms) | db:u16 | klen:u32 | key      |  value: empty
//	scan index     | 0x22 | db:u16 | h:u64 | klen:u32 | key                 |  value: empty; h = ScanHash(key)
//	repl log       | 0x30 | offset:u64 |                                    |  reserved (the log is in memory: replication/)
//
// A key's metadata record sorts right after the data of all its
// versions (format 3; until then it had a tag of its own, 0x10). Every
// XADD rewrites it, in the same batch as the entry at the stream's tail:
// with the record far from the data, each memtable flush was a table
// spanning from the metadata to the tail, overlapping every table that
// held the stream, and each compaction rewrote the whole stream. Next to
// the data, a flush spans the stream's tail and its small records
// (nodes, groups, indexes). Walks over all keys go through the scan index.
//
// A consumer group's records all sit under the stream's version, so DEL,
// overwrite and RENAME carry or drop them with the entries; one group's
// consumers, PEL and per-owner PEL are each one contiguous range
// (ConsumerBounds, PELBounds, PELConsumerBounds), which XGROUP DESTROY
// drops with range deletions. The PEL is indexed twice so that one
// consumer's pending entries are found without scanning the group's.
//
// The version is unique per incarnation of a Redis key: DEL, FLUSHDB,
// overwrite and RENAME give the name a new version (or none), so readers,
// who always go through the metadata record, never see the old data. The
// old data range is recorded under "garbage" in the same batch and dropped
// later with one range deletion.
//
// The scan index holds one record per metadata record, ordered by h =
// ScanHash(key): SCAN's cursor is a position in that order. The key
// counts hold, per database, how many metadata records there are and how
// many of them carry an expiry (DBSIZE and INFO keyspace). The stream
// engine keeps both exact in the batch that writes the metadata. No other
// store record name may start with "keys".
//
// An entry's sequence is its ordinal among all entries ever added to the
// stream (NATS's message sequence); it is stored in the entry's value. The
// seq index holds one record per node, not per entry: the entries with
// sequence n are found by seeking to the last node starting at or before n
// and walking at most one node's entries. The subject index holds one
// record per entry that has a "subject" field, ordered by subject then
// sequence. A field set is the field names that an entry may leave out of
// its value (values.go): a stream records each distinct set once.
//
// Tag and kind bytes are on-disk format: they are never renumbered or
// reused. keys_test.go freezes them with golden bytes.
const (
	tagStore   byte = 0x01
	tagMeta    byte = 0x10 // metadata records until format 3; now unused, never reused
	tagData    byte = 0x11
	tagGarbage byte = 0x20
	tagExpiry  byte = 0x21
	tagScan    byte = 0x22
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
	KindFieldSet      Kind = 0x09
)

// ErrBadKey is returned when a key does not have the expected layout.
var ErrBadKey = errors.New("storage: malformed key")

// Store record names.
var (
	recordFormat      = []byte("format")
	recordVersionHigh = []byte("version-high")
	recordKeyCounts   = []byte("keys")
	recordKeyIndex    = []byte("scan-index")
	recordReplState   = []byte("repl-state") // see repl.go
	recordJournal     = []byte("journal")    // see journal.go
)

func appendName(dst, name []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(name)))
	return append(dst, name...)
}

func storeKey(name []byte) []byte {
	return append([]byte{tagStore}, name...)
}

// metaVersion stands where a data key has its version in a metadata key.
// Versions are allocated counting up from 1 and never reach it, so a
// key's metadata record sorts right after the data of all its versions,
// and the range of one version (VersionBounds) never holds it.
const metaVersion = ^uint64(0)

// AppendMetaKey appends the metadata key of Redis key `key` in database db.
func AppendMetaKey(dst []byte, db int, key []byte) []byte {
	return AppendVersionPrefix(dst, db, key, metaVersion)
}

// DecodeMetaKey returns the database and Redis key of a metadata key. The
// returned key aliases k.
func DecodeMetaKey(k []byte) (db int, key []byte, err error) {
	key, rest, ok := splitDataKey(k)
	if !ok || len(rest) != 8 || binary.BigEndian.Uint64(rest) != metaVersion {
		return 0, nil, ErrBadKey
	}
	return int(binary.BigEndian.Uint16(k[1:])), key, nil
}

// IsMetaKey reports whether k is a metadata key.
func IsMetaKey(k []byte) bool {
	_, _, err := DecodeMetaKey(k)
	return err == nil
}

// DataPrefixDB returns the bounds [lower, upper) of every data and
// metadata record of one database (all keys, all versions).
func DataPrefixDB(db int) (lower, upper []byte) {
	lower = binary.BigEndian.AppendUint16([]byte{tagData}, uint16(db))
	return lower, binary.BigEndian.AppendUint16([]byte{tagData}, uint16(db+1))
}

// AllData returns bounds covering the data and metadata records of every
// database.
func AllData() (lower, upper []byte) {
	return []byte{tagData}, []byte{tagData + 1}
}

// AllKeyspace returns bounds covering the metadata, data, garbage, expiry
// and scan index records of every database: what FLUSHALL removes.
func AllKeyspace() (lower, upper []byte) {
	return []byte{tagMeta}, []byte{tagScan + 1}
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

// DecodeNodeKey returns the database, Redis key, version and master ID
// of a node key. The returned key aliases k.
func DecodeNodeKey(k []byte) (db int, key []byte, version, ms, seq uint64, err error) {
	key, rest, ok := splitDataKey(k)
	if !ok || len(rest) != 8+1+16 || Kind(rest[8]) != KindNode {
		return 0, nil, 0, 0, 0, ErrBadKey
	}
	return int(binary.BigEndian.Uint16(k[1:])), key, binary.BigEndian.Uint64(rest),
		binary.BigEndian.Uint64(rest[9:]), binary.BigEndian.Uint64(rest[17:]), nil
}

// AppendSeqIndexKey appends the seq index key of the node whose first
// entry has sequence n.
func AppendSeqIndexKey(dst []byte, db int, key []byte, version, n uint64) []byte {
	dst = AppendVersionPrefix(dst, db, key, version)
	dst = append(dst, byte(KindSeqIndex))
	return binary.BigEndian.AppendUint64(dst, n)
}

// DecodeSeqIndexKey returns the sequence a seq index key ends with.
func DecodeSeqIndexKey(k []byte) (uint64, error) {
	b, err := dataSuffix(k, KindSeqIndex)
	if err != nil || len(b) != 8 {
		return 0, ErrBadKey
	}
	return binary.BigEndian.Uint64(b), nil
}

// AppendSubjectKey appends the subject index key of the entry with
// sequence n and subject subject.
func AppendSubjectKey(dst []byte, db int, key []byte, version uint64, subject []byte, n uint64) []byte {
	dst = AppendVersionPrefix(dst, db, key, version)
	dst = append(dst, byte(KindSubjectIndex))
	dst = appendName(dst, subject)
	return binary.BigEndian.AppendUint64(dst, n)
}

// SubjectBounds returns [lower, upper) covering the subject index records
// of one subject.
func SubjectBounds(db int, key []byte, version uint64, subject []byte) (lower, upper []byte) {
	lower = AppendVersionPrefix(nil, db, key, version)
	lower = append(lower, byte(KindSubjectIndex))
	lower = appendName(lower, subject)
	return lower, prefixEnd(lower)
}

// DecodeSubjectKey returns the subject (aliasing k) and sequence of a
// subject index key.
func DecodeSubjectKey(k []byte) (subject []byte, n uint64, err error) {
	b, err := dataSuffix(k, KindSubjectIndex)
	if err != nil {
		return nil, 0, err
	}
	subject, rest, err := readName(b)
	if err != nil || len(rest) != 8 {
		return nil, 0, ErrBadKey
	}
	return subject, binary.BigEndian.Uint64(rest), nil
}

// AppendFieldSetKey appends the key of a stream's field set id.
func AppendFieldSetKey(dst []byte, db int, key []byte, version, id uint64) []byte {
	dst = AppendVersionPrefix(dst, db, key, version)
	dst = append(dst, byte(KindFieldSet))
	return binary.BigEndian.AppendUint64(dst, id)
}

// DecodeFieldSetKey returns the id a field set key ends with.
func DecodeFieldSetKey(k []byte) (uint64, error) {
	b, err := dataSuffix(k, KindFieldSet)
	if err != nil || len(b) != 8 {
		return 0, ErrBadKey
	}
	return binary.BigEndian.Uint64(b), nil
}

// AppendIDValue appends an entry ID as the seq and subject indexes store it.
func AppendIDValue(dst []byte, ms, seq uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, ms)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// DecodeIDValue decodes what AppendIDValue wrote.
func DecodeIDValue(v []byte) (ms, seq uint64, err error) {
	if len(v) != 16 {
		return 0, 0, ErrCorrupt
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), nil
}

// KindBounds returns [lower, upper) covering every record of one kind under
// one version of a key.
func KindBounds(db int, key []byte, version uint64, kind Kind) (lower, upper []byte) {
	return kindBoundsOf(AppendVersionPrefix(nil, db, key, version), kind)
}

// kindBoundsOf is KindBounds for the version prefix p, which it keeps.
func kindBoundsOf(p []byte, kind Kind) (lower, upper []byte) {
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

// ScanHash returns the position of key in the scan index: the top 63
// bits of its xxHash64 (so the value fits a signed 64-bit integer, as
// some clients read SCAN cursors), with 1 in place of 0 (cursor 0 is
// SCAN's start and end). It is on-disk format: never changed.
func ScanHash(key []byte) uint64 {
	return max(xxhash.Sum64(key)>>1, 1)
}

// AppendScanKey appends the scan index key of Redis key `key` in database
// db, whose ScanHash is h.
func AppendScanKey(dst []byte, db int, h uint64, key []byte) []byte {
	dst = append(dst, tagScan)
	dst = binary.BigEndian.AppendUint16(dst, uint16(db))
	dst = binary.BigEndian.AppendUint64(dst, h)
	return appendName(dst, key)
}

// DecodeScanKey parses a scan index key. The returned key aliases k.
func DecodeScanKey(k []byte) (db int, h uint64, key []byte, err error) {
	if len(k) < 15 || k[0] != tagScan {
		return 0, 0, nil, ErrBadKey
	}
	db = int(binary.BigEndian.Uint16(k[1:]))
	h = binary.BigEndian.Uint64(k[3:])
	n := binary.BigEndian.Uint32(k[11:])
	if uint64(len(k)-15) != uint64(n) {
		return 0, 0, nil, ErrBadKey
	}
	return db, h, k[15:], nil
}

// ScanBounds returns [lower, upper) covering the scan index entries of db
// whose hash is at least h (every entry of db when h is 0).
func ScanBounds(db int, h uint64) (lower, upper []byte) {
	lower = binary.BigEndian.AppendUint16([]byte{tagScan}, uint16(db))
	lower = binary.BigEndian.AppendUint64(lower, h)
	return lower, binary.BigEndian.AppendUint16([]byte{tagScan}, uint16(db+1))
}

// KeyCountsKey returns the store record key of database db's key counts.
func KeyCountsKey(db int) []byte {
	return binary.BigEndian.AppendUint16(storeKey(recordKeyCounts), uint16(db))
}

// KeyCountsBounds returns [lower, upper) covering the key counts of every
// database.
func KeyCountsBounds() (lower, upper []byte) {
	lower = storeKey(recordKeyCounts)
	upper = storeKey(recordKeyCounts)
	upper[len(upper)-1]++ // "keyt": past every "keys" + db
	return lower, upper
}

// DecodeKeyCountsKey returns the database of a key counts record key.
func DecodeKeyCountsKey(k []byte) (db int, err error) {
	n := 1 + len(recordKeyCounts)
	if len(k) != n+2 || k[0] != tagStore || string(k[1:n]) != string(recordKeyCounts) {
		return 0, ErrBadKey
	}
	return int(binary.BigEndian.Uint16(k[n:])), nil
}

// AppendKeyCounts appends the value of a key counts record.
func AppendKeyCounts(dst []byte, keys, expires uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, keys)
	return binary.BigEndian.AppendUint64(dst, expires)
}

// DecodeKeyCounts parses the value of a key counts record.
func DecodeKeyCounts(v []byte) (keys, expires uint64, err error) {
	if len(v) != 16 {
		return 0, 0, ErrCorrupt
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), nil
}

// KeyIndexKey returns the key of the store record saying that the key
// counts and the scan index cover every key. A store written before they
// existed lacks it, and the engine builds both once.
func KeyIndexKey() []byte { return storeKey(recordKeyIndex) }

// appendGroupPrefix appends the prefix of the records of kind of one
// consumer group.
func appendGroupPrefix(dst []byte, db int, key []byte, version uint64, kind Kind, group []byte) []byte {
	dst = AppendVersionPrefix(dst, db, key, version)
	dst = append(dst, byte(kind))
	return appendName(dst, group)
}

// prefixEnd returns the smallest key greater than every key starting with
// p. Data prefixes start with a tag below 0xff, so it always exists.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// AppendGroupKey appends the key of the record of consumer group `group`.
func AppendGroupKey(dst []byte, db int, key []byte, version uint64, group []byte) []byte {
	return appendGroupPrefix(dst, db, key, version, KindGroup, group)
}

// AppendConsumerKey appends the key of the record of one consumer of a
// group.
func AppendConsumerKey(dst []byte, db int, key []byte, version uint64, group, consumer []byte) []byte {
	dst = appendGroupPrefix(dst, db, key, version, KindConsumer, group)
	return appendName(dst, consumer)
}

// ConsumerBounds returns [lower, upper) covering the consumer records of
// one group.
func ConsumerBounds(db int, key []byte, version uint64, group []byte) (lower, upper []byte) {
	lower = appendGroupPrefix(nil, db, key, version, KindConsumer, group)
	return lower, prefixEnd(lower)
}

// AppendPELKey appends the key of the group's pending entry ms-seq.
func AppendPELKey(dst []byte, db int, key []byte, version uint64, group []byte, ms, seq uint64) []byte {
	dst = appendGroupPrefix(dst, db, key, version, KindPELByID, group)
	dst = binary.BigEndian.AppendUint64(dst, ms)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// PELBounds returns [lower, upper) covering the group's PEL by ID.
func PELBounds(db int, key []byte, version uint64, group []byte) (lower, upper []byte) {
	lower = appendGroupPrefix(nil, db, key, version, KindPELByID, group)
	return lower, prefixEnd(lower)
}

// AppendPELConsumerKey appends the key of pending entry ms-seq in the
// per-owner index of a group.
func AppendPELConsumerKey(dst []byte, db int, key []byte, version uint64, group, consumer []byte, ms, seq uint64) []byte {
	dst = appendGroupPrefix(dst, db, key, version, KindPELByConsumer, group)
	dst = appendName(dst, consumer)
	dst = binary.BigEndian.AppendUint64(dst, ms)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// PELConsumerBounds returns [lower, upper) covering the pending entries of
// one consumer in the per-owner index.
func PELConsumerBounds(db int, key []byte, version uint64, group, consumer []byte) (lower, upper []byte) {
	lower = appendGroupPrefix(nil, db, key, version, KindPELByConsumer, group)
	lower = appendName(lower, consumer)
	return lower, prefixEnd(lower)
}

// PELOwnersBounds returns [lower, upper) covering the whole per-owner
// index of a group.
func PELOwnersBounds(db int, key []byte, version uint64, group []byte) (lower, upper []byte) {
	lower = appendGroupPrefix(nil, db, key, version, KindPELByConsumer, group)
	return lower, prefixEnd(lower)
}

// dataSuffix returns what follows the kind byte of a data key.
func dataSuffix(k []byte, kind Kind) ([]byte, error) {
	_, rest, ok := splitDataKey(k)
	if !ok || len(rest) < 9 || Kind(rest[8]) != kind {
		return nil, ErrBadKey
	}
	return rest[9:], nil
}

// splitDataKey splits a key of tag 0x11 (data and metadata records)
// after its Redis key name: the name, and what follows it (the version,
// then for data the kind and the rest), both aliasing k. ok is false for
// a key of another tag or one too short for its name.
func splitDataKey(k []byte) (key, rest []byte, ok bool) {
	if len(k) < 7 || k[0] != tagData {
		return nil, nil, false
	}
	n := uint64(binary.BigEndian.Uint32(k[3:]))
	if uint64(len(k)-7) < n {
		return nil, nil, false
	}
	return k[7 : 7+n], k[7+n:], true
}

func readName(b []byte) (name, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, ErrBadKey
	}
	n := uint64(binary.BigEndian.Uint32(b))
	if uint64(len(b)-4) < n {
		return nil, nil, ErrBadKey
	}
	return b[4 : 4+n], b[4+n:], nil
}

// DecodeGroupKey returns the group name of a group key; it aliases k.
func DecodeGroupKey(k []byte) ([]byte, error) {
	b, err := dataSuffix(k, KindGroup)
	if err != nil {
		return nil, err
	}
	group, rest, err := readName(b)
	if err != nil || len(rest) != 0 {
		return nil, ErrBadKey
	}
	return group, nil
}

// DecodeConsumerKey returns the group and consumer names of a consumer
// key; they alias k.
func DecodeConsumerKey(k []byte) (group, consumer []byte, err error) {
	b, err := dataSuffix(k, KindConsumer)
	if err != nil {
		return nil, nil, err
	}
	if group, b, err = readName(b); err != nil {
		return nil, nil, err
	}
	consumer, rest, err := readName(b)
	if err != nil || len(rest) != 0 {
		return nil, nil, ErrBadKey
	}
	return group, consumer, nil
}

// entryKey reports whether k is a stream entry's key.
func entryKey(k []byte) bool {
	_, rest, ok := splitDataKey(k)
	return ok && len(rest) == 8+1+16 && Kind(rest[8]) == KindEntry
}

// pointRecord reports whether k is a record the store's Bloom filters
// cover (filter.go): a metadata record, or a stream's node, group,
// consumer or field-set record. These are few per stream and read with
// point Gets, often for keys that do not exist (a new stream's
// metadata); entries and PEL records, one or two per stream entry, are
// left out, so the filters cost no space per entry.
func pointRecord(k []byte) bool {
	_, rest, ok := splitDataKey(k)
	if !ok || len(rest) < 8 {
		return false
	}
	if binary.BigEndian.Uint64(rest) == metaVersion {
		return len(rest) == 8
	}
	if len(rest) < 9 {
		return false
	}
	switch Kind(rest[8]) {
	case KindNode, KindGroup, KindConsumer, KindFieldSet:
		return true
	}
	return false
}
