package stream

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/eddy-streams/eddy/storage"
)

// Keyspace commands: the ones that treat a key as a whole, whatever its
// type.

// typeName is the name TYPE (and SCAN's TYPE filter) uses for t.
func typeName(t storage.KeyType) string {
	switch t {
	case storage.TypeString:
		return "string"
	case storage.TypeStream:
		return "stream"
	}
	return "none"
}

// Type returns "none", "string" or "stream".
func (tx *Tx) Type(db int, key []byte) (string, error) {
	m, ok, err := tx.lookup(db, key)
	if err != nil || !ok {
		return "none", err
	}
	return typeName(m.Type), nil
}

// Exists reports whether key exists (an expired key does not).
func (tx *Tx) Exists(db int, key []byte) (bool, error) {
	_, ok, err := tx.lookup(db, key)
	return ok, err
}

// Del deletes key and reports whether it existed.
func (tx *Tx) Del(db int, key []byte) (bool, error) {
	m, ok, err := tx.lookup(db, key)
	if err != nil || !ok {
		return false, err
	}
	if err := tx.dropKey(db, key, &m); err != nil {
		return false, err
	}
	tx.note(Deleted, db, key)
	return true, nil
}

// Rename moves src, with its TTL, to dst, replacing what dst held. A
// missing src is ErrNoSuchKey. With nx, an existing dst is left alone and
// Rename returns false; renaming a key onto itself changes nothing and
// returns !nx, as Redis replies OK to RENAME and 0 to RENAMENX then.
//
// A stream's data records carry the key name, so its records are copied
// under dst in this batch and src's range is left to the garbage
// collector. The copy gets a fresh version: garbage records are keyed by
// version alone, so reusing src's version would let dst's eventual
// garbage record overwrite src's pending one and leak src's data.
func (tx *Tx) Rename(db int, src, dst []byte, nx bool) (bool, error) {
	m, ok, err := tx.lookup(db, src)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, ErrNoSuchKey
	}
	if string(src) == string(dst) {
		return !nx, nil
	}
	dm, dok, err := tx.lookup(db, dst)
	if err != nil {
		return false, err
	}
	if dok && nx {
		return false, nil
	}
	if dok {
		if err := tx.dropKey(db, dst, &dm); err != nil {
			return false, err
		}
	}
	moved := m
	if m.Type == storage.TypeStream {
		if moved.Version, err = tx.newVersion(); err != nil {
			return false, err
		}
		if err := tx.copyData(db, src, m.Version, dst, moved.Version); err != nil {
			return false, err
		}
	}
	// Drop src before writing dst: both touch only their own name's
	// records, but dropping first keeps the batch's order obvious.
	if err := tx.dropKey(db, src, &m); err != nil {
		return false, err
	}
	if err := tx.putMeta(db, dst, &moved, nil); err != nil {
		return false, err
	}
	tx.note(Deleted, db, src)
	tx.note(Written, db, dst)
	return true, nil
}

// copyData writes every data record of (src, srcVersion) under (dst,
// dstVersion). The records' suffixes (kind and what follows) are kept
// as they are; only the shared prefix changes.
func (tx *Tx) copyData(db int, src []byte, srcVersion uint64, dst []byte, dstVersion uint64) error {
	lower, upper := storage.VersionBounds(db, src, srcVersion)
	prefix := storage.AppendVersionPrefix(nil, db, dst, dstVersion)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return err
	}
	// Pebble batch iterators do not see writes made after they were
	// created, and the new records lie outside [lower, upper) anyway.
	for ok := it.First(); ok; ok = it.Next() {
		k := append(prefix[:len(prefix):len(prefix)], it.Key()[len(lower):]...)
		if err := tx.b.Set(k, it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// FlushDB removes every key of db: two range deletions for its data
// (metadata included) and scan index, plus its entries in the expiry
// index, which is ordered by time and so has to be walked (it holds only
// keys with a TTL); its key counts go to zero. Garbage records of db's dropped
// streams stay; collecting them later deletes ranges that are already
// empty.
func (tx *Tx) FlushDB(db int) error {
	if tx.b == nil {
		return ErrReadOnlyTx
	}
	lo, hi := storage.DataPrefixDB(db) // data and metadata
	if err := tx.b.DeleteRange(lo, hi); err != nil {
		return err
	}
	lo, hi = storage.ScanBounds(db, 0)
	if err := tx.b.DeleteRange(lo, hi); err != nil {
		return err
	}
	tx.resetCounts(db)
	// Deleting under the iterator is safe: a batch iterator sees the
	// batch as it was when the iterator was created.
	lo, hi = storage.ExpiryBounds(math.MaxInt64) // every entry
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		_, edb, _, err := storage.DecodeExpiryKey(it.Key())
		if err != nil {
			it.Close()
			return err
		}
		if edb == db {
			if err := tx.b.Delete(it.Key()); err != nil {
				it.Close()
				return err
			}
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	tx.stageFlush(db, false)
	tx.changes = append(tx.changes, Change{Kind: Flushed, DB: db})
	return nil
}

// FlushAll removes every key of every database with one range deletion
// and sets every database's key counts to zero.
func (tx *Tx) FlushAll() error {
	if tx.b == nil {
		return ErrReadOnlyTx
	}
	lo, hi := storage.AllKeyspace()
	if err := tx.b.DeleteRange(lo, hi); err != nil {
		return err
	}
	dbs := slices.Collect(maps.Keys(tx.e.counts))
	for db := range tx.deltas {
		dbs = append(dbs, db)
	}
	for _, db := range dbs {
		tx.resetCounts(db) // a second reset of the same db adds nothing
	}
	tx.stageFlush(0, true)
	tx.changes = append(tx.changes, Change{Kind: Flushed, AllDBs: true})
	return nil
}

// eachKey calls fn with every live (unexpired) key of db in scan order
// (the scan index's: by ScanHash, then bytes) and its metadata, from the
// first key after after (nil: from the first of all). Metadata records
// sit among the keys' data (storage/keys.go), so the walk goes through
// the scan index, one record per key, and reads each key's metadata as
// every read does (readMeta: the cache first). m's Body is nil for a
// stream. key is valid only during the call: fn must copy it to keep it.
func (tx *Tx) eachKey(db int, after []byte, fn func(key []byte, m *storage.Meta) (more bool, err error)) error {
	lo, hi := storage.ScanBounds(db, 0)
	if after != nil {
		lo = append(storage.AppendScanKey(nil, db, tx.e.opts.scanHash(after), after), 0)
	}
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		_, _, key, err := storage.DecodeScanKey(it.Key())
		if err != nil {
			it.Close()
			return err
		}
		km, found, err := tx.readMeta(db, key)
		if err != nil {
			it.Close()
			return err
		}
		if !found || km.meta.ExpireAt != 0 && km.meta.ExpireAt <= tx.now {
			continue
		}
		more, err := fn(key, &km.meta)
		if err != nil || !more {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// DBSize returns the number of keys in db, from the key counts
// (keyindex.go). Like Redis's, it includes keys whose TTL has passed but
// that have not been reclaimed yet.
func (tx *Tx) DBSize(db int) (int64, error) {
	return tx.keyCounts(db).keys, nil
}

// KeyspaceStats returns the keys of db and how many of them have a TTL,
// for INFO keyspace, counted as DBSize counts.
func (tx *Tx) KeyspaceStats(db int) (keys, expires int64, err error) {
	c := tx.keyCounts(db)
	return c.keys, c.expires, nil
}

// Keys returns the live keys of db matching the glob pattern, in scan
// order (Redis's is its hash table's: clients do not rely on one).
func (tx *Tx) Keys(db int, pattern []byte) ([][]byte, error) {
	all := len(pattern) == 1 && pattern[0] == '*'
	var out [][]byte
	err := tx.eachKey(db, nil, func(key []byte, _ *storage.Meta) (bool, error) {
		if all || globMatch(pattern, key) {
			out = append(out, append([]byte(nil), key...))
		}
		return true, nil
	})
	return out, err
}

// ObjectEncoding returns what OBJECT ENCODING reports; ok is false for a
// missing key. Strings follow Redis 7.0's choice when a value is stored
// by SET: "int" for a canonical 64-bit integer, "embstr" up to 44 bytes,
// "raw" beyond. Redis also reports "raw" for a short string grown by
// APPEND and "embstr" for INCRBYFLOAT results; Eddy stores no encoding,
// so those cases report by the value alone.
func (tx *Tx) ObjectEncoding(db int, key []byte) (string, bool, error) {
	m, ok, err := tx.lookup(db, key)
	if err != nil || !ok {
		return "", false, err
	}
	if m.Type == storage.TypeStream {
		return "stream", true, nil
	}
	hint, v := splitString(m.Body)
	switch {
	case hint == hintRaw || len(v) > embstrMax:
		return "raw", true, nil
	case hint == hintEmbstr:
		return "embstr", true, nil
	}
	return stringEncoding(v), true, nil
}

// embstrMax is the longest string Redis 7.0 keeps embedded in its object
// header (OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
const embstrMax = 44

func stringEncoding(v []byte) string {
	if _, ok := parseInt(v); ok {
		return "int"
	}
	if len(v) <= embstrMax {
		return "embstr"
	}
	return "raw"
}

// parseInt parses v as Redis's string2ll does: only the canonical decimal
// form of an int64 (no sign '+', no leading zeros, no "-0", no spaces).
func parseInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, false
	}
	var buf [20]byte
	return n, string(strconv.AppendInt(buf[:0], n, 10)) == string(v)
}
