package stream

import (
	"slices"
	"sync"

	"github.com/eddy-streams/eddy/storage"
)

// The metadata cache keeps the decoded metadata record of recently used
// streams in memory, with the stream's tail node: XADD finds its stream's
// last ID, length and tail node without reading Pebble, and XLEN answers
// from memory. Strings are not kept (their record is their value).
//
// The cache holds committed state only:
//   - A write transaction stages every metadata change it makes (putMeta,
//     save, dropKey, FlushDB and FlushAll are the only writers of metadata
//     records) and reads its own staged state before the cache.
//   - Update publishes what was staged after the batch applied, with
//     Engine.mu held exclusively: a reader never sees half a transaction,
//     and a failed or rolled-back transaction publishes nothing. Within a
//     group commit, a function that fails has its staging undone from
//     Tx.undo (commit.go) before the next one runs.
//   - A miss is filled from storage only when the transaction has not
//     changed the key, so the value read is the committed one. A key
//     storage does not hold is filled too, as absent (keyMeta.absent):
//     reads of a key that does not exist yet (XREAD, XLEN, EXISTS of a
//     stream to come) then cost no Pebble Get each. Every write of a
//     metadata record is staged, so publishing one replaces the entry.
//
// Locking: readers share Engine.mu and a writer builds its batch without
// it, so both take metaCache.mu around each access (a hit sets a
// reference bit, a miss may fill). Publishing holds Engine.mu exclusively
// and so is alone with the cache. While Pebble applies a batch nothing is
// published yet: a View that starts then reads through a snapshot and
// leaves the cache alone (engine.go), since the snapshot may hold the
// batch the cache does not.
//
// Memory is bounded by a number of keys. Eviction is CLOCK: a hit marks
// the entry referenced; to make room the hand sweeps the ring, clearing
// marks, and evicts the first unmarked entry it meets.

// DefaultMetaCacheKeys is how many keys the metadata cache holds when
// Options.MetaCacheKeys is 0. An entry takes about 460 bytes with its key
// name (INFO used_memory, ~100,000 streams), so a full cache costs ~46 MB;
// it fills only as that many keys are used. Writes to more active keys
// than the cache holds read each key's metadata, field sets and tail node
// from the store: XADD -P 16 to 100,000 random streams ran several times
// faster, on less server CPU, with this default than with 10,000, for a
// little more RSS (bench/results/HISTORY.md, "Figures that stood in code
// comments").
const DefaultMetaCacheKeys = 100000

// keyMeta is a key's metadata record, decoded.
type keyMeta struct {
	meta storage.Meta // for a stream Body is nil: sm holds it decoded
	sm   streamMeta   // stream only
	// tail is the stream's node at sm.Tail when hasTail; the cache keeps
	// it so that XADD need not read the node record to extend it.
	tail    Node
	hasTail bool
	sets    *fieldSets // stream only; nil until loaded
	// rec to recIdx carry streamRef's from one command of a transaction
	// to the next; they mean nothing outside it, and the cache drops them.
	rec, recLast ID
	recN, recIdx int
	// absent marks a cache entry for a key storage does not hold; only
	// the cache sets it (readMeta).
	absent bool
}

// metaCache is the bounded map from (db, key) to keyMeta.
type metaCache struct {
	mu   sync.Mutex                     // taken around each access, except when Engine.mu is held exclusively
	max  int                            // most entries held; at least 1
	dbs  map[int]map[string]*cacheEntry // guarded by mu or exclusive Engine.mu
	ring []*cacheEntry                  // guarded by mu or exclusive Engine.mu: the CLOCK, every entry once
	hand int                            // guarded by mu or exclusive Engine.mu
}

type cacheEntry struct {
	db   int
	key  string
	slot int  // index in ring
	ref  bool // referenced since the hand last passed
	km   keyMeta
}

// newMetaCache returns a cache of at most max keys, or nil (no cache)
// when max < 0.
func newMetaCache(max int) *metaCache {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = DefaultMetaCacheKeys
	}
	return &metaCache{max: max, dbs: make(map[int]map[string]*cacheEntry)}
}

func (c *metaCache) get(db int, key []byte) (keyMeta, bool) {
	ce := c.dbs[db][string(key)]
	if ce == nil {
		return keyMeta{}, false
	}
	ce.ref = true
	return ce.km, true
}

// put stores km for (db, key), evicting another entry if the cache is full.
func (c *metaCache) put(db int, key []byte, km *keyMeta) {
	m := c.dbs[db]
	if m == nil {
		m = make(map[string]*cacheEntry)
		c.dbs[db] = m
	}
	if ce := m[string(key)]; ce != nil {
		ce.km = *km
		ce.km.rec, ce.km.recLast, ce.km.recN, ce.km.recIdx = ID{}, ID{}, 0, 0
		return
	}
	ce := &cacheEntry{db: db, key: string(key), km: *km}
	ce.km.rec, ce.km.recLast, ce.km.recN, ce.km.recIdx = ID{}, ID{}, 0, 0
	if len(c.ring) < c.max {
		ce.slot = len(c.ring)
		c.ring = append(c.ring, ce)
	} else {
		for c.ring[c.hand].ref {
			c.ring[c.hand].ref = false
			c.hand = (c.hand + 1) % len(c.ring)
		}
		old := c.ring[c.hand]
		delete(c.dbs[old.db], old.key)
		ce.slot = c.hand
		c.ring[c.hand] = ce
		c.hand = (c.hand + 1) % len(c.ring)
	}
	m[ce.key] = ce
}

// remove forgets (db, key).
func (c *metaCache) remove(db int, key []byte) {
	m := c.dbs[db]
	ce := m[string(key)]
	if ce == nil {
		return
	}
	delete(m, ce.key)
	last := c.ring[len(c.ring)-1]
	c.ring[ce.slot] = last
	last.slot = ce.slot
	c.ring[len(c.ring)-1] = nil
	c.ring = c.ring[:len(c.ring)-1]
	if c.hand >= len(c.ring) {
		c.hand = 0
	}
}

// flush forgets every key of db, or of every database when all.
func (c *metaCache) flush(db int, all bool) {
	if all {
		clear(c.dbs)
		clear(c.ring)
		c.ring, c.hand = c.ring[:0], 0
		return
	}
	if len(c.dbs[db]) == 0 {
		return
	}
	delete(c.dbs, db)
	kept := c.ring[:0]
	for _, ce := range c.ring {
		if ce.db != db {
			ce.slot = len(kept)
			kept = append(kept, ce)
		}
	}
	clear(c.ring[len(kept):])
	c.ring, c.hand = kept, 0
}

// len is the number of keys held.
func (c *metaCache) len() int { return len(c.ring) }

// stagedMeta is a metadata change a write transaction made, published to
// the cache once its batch is applied.
type stagedMeta struct {
	db  int
	key []byte // in Tx.arena
	// gone: the key was removed, or now holds what the cache does not keep
	// (a string); reads go to the batch.
	gone bool
	km   keyMeta
}

// stagedIndexMin is the number of staged keys from which a transaction
// indexes them in a map rather than searching the list.
const stagedIndexMin = 16

// readMeta returns key's metadata record as the transaction sees it,
// without looking at its expiry: from the transaction's own changes, the
// cache, or storage (filling the cache when the record is committed
// state).
func (tx *Tx) readMeta(db int, key []byte) (keyMeta, bool, error) {
	c := tx.e.cache
	clean := true // the record in storage is the committed one
	if tx.b != nil {
		if st := tx.stagedFor(db, key); st != nil {
			if !st.gone {
				return st.km, true, nil
			}
			clean = false
		} else if tx.flushedAll || (len(tx.flushed) > 0 && tx.flushedDB(db)) {
			clean = false
		}
	} else if tx.snap != nil {
		clean = false // the cache may be behind or ahead of the snapshot
	}
	if clean && c != nil {
		c.mu.Lock()
		km, ok := c.get(db, key)
		c.mu.Unlock()
		if ok {
			return km, !km.absent, nil
		}
	}
	tx.kbuf = storage.AppendMetaKey(tx.kbuf[:0], db, key)
	v, ok, err := tx.r.Get(tx.kbuf)
	if err != nil {
		return keyMeta{}, false, err
	}
	if !ok {
		if clean && c != nil {
			c.mu.Lock()
			c.put(db, key, &keyMeta{absent: true})
			c.mu.Unlock()
		}
		return keyMeta{}, false, nil
	}
	km, err := decodeKeyMeta(v)
	if err != nil {
		return keyMeta{}, false, err
	}
	if km.meta.Type != storage.TypeStream {
		return km, true, nil
	}
	if clean && c != nil {
		c.mu.Lock()
		c.put(db, key, &km)
		c.mu.Unlock()
		tx.e.markIfLong(db, key, km.meta.Version, &km.sm)
	}
	return km, true, nil
}

// decodeKeyMeta decodes a metadata record; a stream's Body is decoded into
// sm and dropped.
func decodeKeyMeta(v []byte) (keyMeta, error) {
	m, err := storage.DecodeMeta(v)
	if err != nil {
		return keyMeta{}, err
	}
	km := keyMeta{meta: m}
	if m.Type != storage.TypeStream {
		return km, nil
	}
	if km.sm, err = decodeStreamMeta(m.Body); err != nil {
		return keyMeta{}, err
	}
	km.meta.Body = nil
	return km, nil
}

// stagedFor returns the transaction's staged change of (db, key), or nil.
func (tx *Tx) stagedFor(db int, key []byte) *stagedMeta {
	if i := tx.stagedIndex(db, key); i >= 0 {
		return &tx.staged[i]
	}
	return nil
}

// stagedIndex returns the index in staged of (db, key), or -1.
func (tx *Tx) stagedIndex(db int, key []byte) int {
	if tx.stagedIx != nil {
		if i, ok := tx.stagedIx[stagedName(db, key)]; ok {
			return i
		}
		return -1
	}
	for i := range tx.staged {
		if st := &tx.staged[i]; st.db == db && string(st.key) == string(key) {
			return i
		}
	}
	return -1
}

func stagedName(db int, key []byte) string {
	return string(storage.AppendMetaKey(nil, db, key))
}

// stage records that (db, key) now holds km (or, when gone, nothing the
// cache keeps). A tail node staged before and not in km any more has its
// record, if deferred lazily (appendEntry), made now, while it can be.
func (tx *Tx) stage(db int, key []byte, gone bool, km *keyMeta) error {
	if tx.e.cache == nil {
		return nil
	}
	if i := tx.stagedIndex(db, key); i >= 0 {
		st := &tx.staged[i]
		if old := &st.km; !st.gone && old.hasTail && tx.b != nil &&
			(gone || !km.hasTail || km.meta.Version != old.meta.Version || km.tail.Master != old.tail.Master) {
			tx.kbuf = storage.AppendNodeKey(tx.kbuf[:0], db, key, old.meta.Version, old.tail.Master.Ms, old.tail.Master.Seq)
			if err := tx.b.materializeKey(tx.kbuf); err != nil {
				return err
			}
		}
		tx.undo = append(tx.undo, undoRec{kind: undoStaged, i: i, st: *st})
		st.gone, st.km = gone, *km
		return nil
	}
	tx.staged = append(tx.staged, stagedMeta{db: db, key: tx.keep(key), gone: gone, km: *km})
	switch n := len(tx.staged); {
	case n == stagedIndexMin:
		tx.stagedIx = make(map[string]int, 2*n)
		for i := range tx.staged {
			tx.stagedIx[stagedName(tx.staged[i].db, tx.staged[i].key)] = i
		}
	case n > stagedIndexMin:
		tx.stagedIx[stagedName(db, key)] = n - 1
	}
	return nil
}

// stagePut stages the metadata record m written for (db, key).
func (tx *Tx) stagePut(db int, key []byte, m *storage.Meta) error {
	if tx.e.cache == nil {
		return nil
	}
	km := keyMeta{meta: *m}
	gone := true
	if m.Type == storage.TypeStream {
		if sm, err := decodeStreamMeta(m.Body); err == nil {
			km.sm, km.meta.Body, gone = sm, nil, false
		}
	}
	return tx.stage(db, key, gone, &km)
}

// stageFlush records that every key of db (of every database when all)
// was removed: changes staged before are void, and reads of those
// databases go to the batch from now on.
func (tx *Tx) stageFlush(db int, all bool) {
	if tx.e.cache == nil {
		return
	}
	tx.undo = append(tx.undo, undoRec{
		kind:       undoFlush,
		staged:     slices.Clone(tx.staged),
		flushed:    slices.Clone(tx.flushed),
		flushedAll: tx.flushedAll,
	})
	kept := tx.staged[:0]
	for _, st := range tx.staged {
		if !all && st.db != db {
			kept = append(kept, st)
		}
	}
	clear(tx.staged[len(kept):])
	tx.staged = kept
	if tx.stagedIx != nil {
		clear(tx.stagedIx)
		for i := range tx.staged {
			tx.stagedIx[stagedName(tx.staged[i].db, tx.staged[i].key)] = i
		}
	}
	if all {
		tx.flushedAll = true
		tx.flushed = tx.flushed[:0]
	} else if !tx.flushedDB(db) {
		tx.flushed = append(tx.flushed, db)
	}
}

func (tx *Tx) flushedDB(db int) bool {
	for _, d := range tx.flushed {
		if d == db {
			return true
		}
	}
	return false
}

// publish applies the staged changes to the cache. Update calls it once
// the batch is applied, with Engine.mu held exclusively. Flushes come
// first: changes staged before a flush were dropped when it was staged.
func (tx *Tx) publish() {
	c := tx.e.cache
	if c == nil {
		return
	}
	if tx.flushedAll {
		c.flush(0, true)
	}
	for _, db := range tx.flushed {
		c.flush(db, false)
	}
	for i := range tx.staged {
		st := &tx.staged[i]
		if st.gone {
			c.remove(st.db, st.key)
		} else {
			c.put(st.db, st.key, &st.km)
		}
	}
}

// keep copies key into the transaction's arena; the copy lives as long as
// the transaction.
func (tx *Tx) keep(key []byte) []byte {
	n := len(tx.arena)
	tx.arena = append(tx.arena, key...)
	return tx.arena[n:len(tx.arena):len(tx.arena)]
}
