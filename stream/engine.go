package stream

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/storage"
)

// Engine errors. The server maps each to its Redis wire text.
var (
	// ErrWrongType: the key holds a value of another type.
	ErrWrongType = errors.New("stream: wrong type")
	// ErrNoSuchKey: the command needs an existing key.
	ErrNoSuchKey = errors.New("stream: no such key")
	// ErrReadOnlyTx: a write was attempted inside View.
	ErrReadOnlyTx = errors.New("stream: write in a read-only transaction")
)

// Options configure an Engine.
type Options struct {
	// Limits returns the live node limits (stream-node-max-bytes and
	// stream-node-max-entries); nil means Redis's defaults.
	Limits func() NodeLimits
	// OnCommit, when set, is called after a write transaction is durable
	// with the keys it changed, before its Update returns. For a group
	// commit the leader calls it once per function, in the group's order,
	// in its own goroutine: callers of Update must not hold a lock it
	// takes. It must not call back into the Engine synchronously with a
	// write, and must not keep the slice after it returns (the keys in it
	// it may keep).
	OnCommit func(changes []Change)
	// OnApply, when set, is given every group's batch representation and
	// changes right after the batch is applied, in commit order, with
	// Engine.mu held (replica.go): it must copy what it keeps and not
	// call into the Engine.
	OnApply func(repr []byte, changes []Change)
	// Now returns the current time in unix milliseconds; nil means the
	// wall clock.
	Now    func() int64
	Logger *slog.Logger
	// MetaCacheKeys bounds the metadata cache (metacache.go) in keys: 0
	// means DefaultMetaCacheKeys, a negative value turns the cache off.
	MetaCacheKeys int
	// GroupCacheRecords bounds the group cache (groupcache.go) in group
	// and consumer records: 0 means DefaultGroupCacheRecords, a negative
	// value turns the cache off.
	GroupCacheRecords int

	// scanHash replaces storage.ScanHash, so that tests can make keys
	// collide. It orders the scan index on disk: never set outside tests.
	scanHash func(key []byte) uint64
	// applyHook, when set, runs just before and just after a group's batch
	// is applied, with Engine.mu released (tests: readers must not wait).
	applyHook func(applied bool)
}

// ChangeKind says how a key was changed.
type ChangeKind uint8

// Change kinds.
const (
	// Written: the key's value changed (or was created or expired).
	Written ChangeKind = iota
	// Appended: entries were appended to the stream (XADD); wakes readers.
	Appended
	// Deleted: the key no longer exists.
	Deleted
	// Flushed: every key of DB was removed (Key is nil); with AllDBs, of
	// every database.
	Flushed
	// GroupDestroyed: a consumer group of the stream was destroyed.
	// Clients blocked in XREADGROUP on the key must wake and re-check
	// (they get NOGROUP); it is not a modification of the key, so WATCH
	// ignores it (Redis signals the key ready, not modified).
	GroupDestroyed
)

// Change is one key touched by a committed write.
type Change struct {
	Kind   ChangeKind
	DB     int
	Key    []byte
	AllDBs bool
}

// Engine is the keyspace of every database: streams and strings, on a
// storage.DB. All access goes through transactions: View for reads,
// Update for writes; concurrent Updates are committed in groups, one
// storage batch and one sync per group (commit.go).
//
// Lock order: Engine.wmu, Engine.mu, then anything in storage; Engine.qmu
// alone.
type Engine struct {
	db   *storage.DB
	opts Options

	// wmu is held by whoever may change the store: the commit leader for
	// the whole of a group (build, apply, publish), a replica applying its
	// primary's batch, a full sync. Readers never take it.
	wmu sync.Mutex
	// mu is held shared by readers and exclusively by a writer only to
	// start an apply (waiting out the readers that read without a
	// snapshot) and to publish what the batch changed to the caches and
	// counters: not while it builds the batch, nor while Pebble applies
	// it. While a batch is being applied (applying), the caches may be
	// behind storage, so a View then reads through a snapshot and
	// bypasses them.
	mu          sync.RWMutex
	applying    atomic.Bool // set and cleared with mu held exclusively
	nextVersion uint64      // guarded by wmu
	highVersion uint64      // guarded by wmu: persisted bound; every version used is below it
	// counts holds, per database, the committed metadata records and how
	// many carry an expiry: DBSIZE and INFO keyspace (keyindex.go).
	counts map[int]keyCounts // guarded by mu (written with mu held exclusively)
	// cache holds decoded metadata of recently used streams; nil when
	// turned off. Its own doc (metacache.go) says how it is guarded.
	cache *metaCache
	// gcache holds consumer-group records; nil when turned off. Guarded
	// as cache is (groupcache.go).
	gcache *groupCache
	// txs recycles transactions, and with them their buffers.
	txs sync.Pool

	// The commit queue (commit.go). qmu is held alone, never with mu.
	qmu     sync.Mutex
	queue   []*commitReq // guarded by qmu: Updates waiting, oldest first
	spare   []*commitReq // guarded by qmu: a drained queue, for reuse
	leading bool         // guarded by qmu: a leader is committing a group
	reqs    sync.Pool    // recycled *commitReq
	// groups and grouped count the groups committed and the Updates
	// they held.
	groups, grouped atomic.Uint64
	// batches and batchWrites count the groups applied and the Updates
	// whose writes they carried (CommitStats).
	batches, batchWrites atomic.Uint64
	// follower is set while the engine follows a primary (replica.go).
	follower atomic.Bool
}

// Open returns an Engine over db.
func Open(db *storage.DB, opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Limits == nil {
		opts.Limits = defaultLimits
	}
	if opts.Now == nil {
		opts.Now = func() int64 { return time.Now().UnixMilli() }
	}
	if opts.scanHash == nil {
		opts.scanHash = storage.ScanHash
	}
	high, err := db.HighVersion()
	if err != nil {
		return nil, err
	}
	e := &Engine{db: db, opts: opts, nextVersion: max(high, 1), highVersion: high, cache: newMetaCache(opts.MetaCacheKeys),
		gcache: newGroupCache(opts.GroupCacheRecords)}
	if err := e.loadKeyIndex(); err != nil {
		return nil, err
	}
	return e, nil
}

// reader is what a transaction reads through: the committed state, or a
// batch over it.
type reader interface {
	Get(key []byte) ([]byte, bool, error)
	NewIter(lower, upper []byte) (*storage.Iter, error)
}

// Tx is a transaction: a consistent view of the keyspace and, in Update,
// a batch of writes that commits atomically.
type Tx struct {
	e       *Engine
	r       reader   // b in Update, so that reads see deferred writes
	b       *txBatch // nil in View; &wb in Update
	wb      txBatch
	now     int64
	changes []Change
	deltas  map[int]keyCounts // changes to Engine.counts, made there once the batch is applied
	expired []Change          // View only: expired keys met, deleted once the View ends
	// snap is the snapshot a View reads through when it began while a
	// batch was being applied; then the caches are not consulted.
	snap *storage.Snapshot

	// Metadata changes for the cache, published by Update once the batch
	// is applied (metacache.go).
	staged     []stagedMeta
	stagedIx   map[string]int // index of staged by stagedName, once it is long
	flushed    []int          // databases flushed by this transaction
	flushedAll bool
	// undo logs what staged and deltas held before each change, so that
	// one function of a group can be rolled back (commit.go).
	undo []undoRec
	// groups is what the transaction staged for the group cache.
	groups groupStage

	// Scratch space, reused from one transaction to the next: Pebble
	// copies what a batch Set is given, so keys and values are built here.
	arena          []byte // keep: key copies living as long as the transaction
	kbuf, vbuf     []byte
	body           []byte
	lo, hi, mid    []byte     // eachEntry's bounds and its window's edge
	start          []byte     // the key of ID 0-0: a packed stream's scans start there
	recs           []recEntry // the entries of one record (records.go)
	rkey, rval     []byte     // addEntry's
	lazyBody       []byte     // encodeLazyMeta's
	fields, values [][]byte
	scan           [][]byte     // XRangeEach's fields of one entry
	refs           [2]streamRef // the first streams loaded; then more
	nrefs          int
	// more holds the refs loaded after the first two, kept for the next
	// transaction: a group commit loads a ref per XADD, and each was an
	// allocation of its own (BenchmarkXAddBatched: 50 per group). They
	// are allocated in slabs (newRef).
	more  []*streamRef
	nmore int
	// keyChunk is where changeKey copies changed keys; never truncated.
	keyChunk []byte
}

// maxKeptRefs bounds the refs a recycled transaction keeps in more. The
// event loop's group under XADD -P 16 from 50 clients loads up to 800;
// with appendfsync always, whose held replies bring the clients back
// together, groups of 200-800 are the rule, and with a bound of 256 each
// such group allocated its refs anew: 284 bytes an XADD, two thirds of
// what the server allocated (alloc profile, 400k XADDs). A recycled
// transaction so keeps up to 1,024 refs of 376 bytes, 385 KB, in slabs
// that end at that bound (16, 16, 32, ... 512).
const maxKeptRefs = 1024

// maxKeptBuf is the largest scratch buffer a recycled transaction keeps.
const maxKeptBuf = 64 << 10

func (e *Engine) newTx(r reader, b *storage.Batch) *Tx {
	tx, _ := e.txs.Get().(*Tx)
	if tx == nil {
		tx = &Tx{e: e}
	}
	tx.r, tx.b, tx.now = r, nil, e.opts.Now()
	if b != nil {
		tx.wb.Batch = b
		tx.r, tx.b = &tx.wb, &tx.wb
		if tx.wb.encodeLazy == nil {
			tx.wb.encodeLazy = tx.encodeLazy // bound once: tx is reused
		}
		if checkPELWrites {
			// The per-owner index is written in order at the end
			// (txBatch.QueueOrdered): check each record there.
			wb := &tx.wb
			wb.checkOrdered = func(key []byte, del bool) error { return checkPELKey(wb, key, del) }
		}
	}
	return tx
}

// freeTx returns tx for reuse. Nothing may refer to it, or to what it
// handed out from its scratch space, any more.
func (e *Engine) freeTx(tx *Tx) {
	tx.r, tx.b = nil, nil
	tx.wb.reset()
	clear(tx.changes)
	tx.changes = tx.changes[:0]
	clear(tx.deltas)
	clear(tx.expired)
	tx.expired = tx.expired[:0]
	clear(tx.staged)
	tx.staged = tx.staged[:0]
	tx.stagedIx = nil
	tx.flushed, tx.flushedAll = tx.flushed[:0], false
	clear(tx.undo)
	tx.undo = tx.undo[:0]
	tx.groups.reset()
	tx.refs = [2]streamRef{}
	tx.nrefs = 0
	for _, r := range tx.more[:tx.nmore] {
		*r = streamRef{}
	}
	if len(tx.more) > maxKeptRefs {
		clear(tx.more[maxKeptRefs:])
		tx.more = tx.more[:maxKeptRefs]
	}
	tx.nmore = 0
	clear(tx.fields[:cap(tx.fields)])
	clear(tx.values[:cap(tx.values)])
	clear(tx.scan[:cap(tx.scan)])
	for _, b := range []*[]byte{&tx.arena, &tx.kbuf, &tx.vbuf, &tx.body, &tx.lo, &tx.hi} {
		if cap(*b) > maxKeptBuf {
			*b = nil
		}
		*b = (*b)[:0]
	}
	if cap(tx.fields) > maxKeptBuf/16 {
		tx.fields, tx.values = nil, nil
	}
	e.txs.Put(tx)
}

// View runs fn with a read-only transaction.
func (e *Engine) View(fn func(tx *Tx) error) error { return e.ViewWith(nil, fn) }

// ViewWith is View reading through iters, an iterator cache of the
// calling goroutine's (nil: none).
func (e *Engine) ViewWith(iters *ReadCache, fn func(tx *Tx) error) error {
	e.mu.RLock()
	tx := e.newTx(e.db, nil)
	if iters != nil {
		tx.r = iters.c
	}
	if e.applying.Load() {
		tx.snap = e.db.NewSnapshot()
		tx.r = tx.snap
	}
	err := fn(tx)
	if tx.snap != nil {
		if cerr := tx.snap.Close(); err == nil {
			err = cerr
		}
		tx.snap = nil
	}
	e.mu.RUnlock()
	if len(tx.expired) > 0 && !e.follower.Load() {
		// Redis deletes an expired key when a read meets it; a View cannot
		// write, so the deletion follows right after, before the reply.
		if derr := e.Update(func(u *Tx) error {
			for _, c := range tx.expired {
				if _, _, err := u.lookup(c.DB, c.Key); err != nil {
					return err
				}
			}
			return nil
		}); err == nil {
			err = derr
		}
	}
	e.freeTx(tx)
	return err
}

// Now is the transaction's clock (unix ms), fixed for its duration as Redis
// fixes the time for one command.
func (tx *Tx) Now() int64 { return tx.now }

// Writable reports whether the transaction may write.
func (tx *Tx) Writable() bool { return tx.b != nil }

func (tx *Tx) note(kind ChangeKind, db int, key []byte) {
	tx.changes = append(tx.changes, Change{Kind: kind, DB: db, Key: tx.changeKey(key)})
}

// changeKeyChunk is the size of the chunks changed keys are copied into.
const changeKeyChunk = 512

// changeKey copies key for a Change. OnCommit may keep the copy, so a
// copy is never written again: copies are carved one after another from
// a chunk the transaction, and the next ones it is recycled into, only
// append to. A key kept holds its chunk; a write no longer costs an
// allocation of its own (BenchmarkXAddBatched: 50 per group).
func (tx *Tx) changeKey(key []byte) []byte {
	if len(key) == 0 || len(key) > changeKeyChunk/8 {
		return append([]byte(nil), key...)
	}
	if cap(tx.keyChunk)-len(tx.keyChunk) < len(key) {
		tx.keyChunk = make([]byte, 0, changeKeyChunk)
	}
	n := len(tx.keyChunk)
	tx.keyChunk = append(tx.keyChunk, key...)
	return tx.keyChunk[n:len(tx.keyChunk):len(tx.keyChunk)]
}

// newVersion allocates a key version, persisting a new high-water mark
// in the same batch when the previous one is used up.
func (tx *Tx) newVersion() (uint64, error) {
	e := tx.e
	v := e.nextVersion
	e.nextVersion++
	if e.nextVersion > e.highVersion {
		e.highVersion = e.nextVersion + 1<<16
		if err := tx.b.SetHighVersion(e.highVersion); err != nil {
			return 0, err
		}
	}
	return v, nil
}

// lookup reads the metadata of key. An expired key is reported missing
// (and, in a write transaction, deleted: lazy expiry). The Body is the
// caller's to keep.
func (tx *Tx) lookup(db int, key []byte) (storage.Meta, bool, error) {
	km, ok, err := tx.lookupMeta(db, key)
	if err != nil || !ok {
		return storage.Meta{}, false, err
	}
	if km.meta.Type == storage.TypeStream {
		km.meta.Body = km.sm.appendBinary(nil)
	}
	return km.meta, true, nil
}

// lookupMeta is lookup returning the record decoded (a stream's Body is
// nil, its metadata in sm).
func (tx *Tx) lookupMeta(db int, key []byte) (keyMeta, bool, error) {
	km, ok, err := tx.readMeta(db, key)
	if err != nil || !ok {
		return keyMeta{}, false, err
	}
	if m := &km.meta; m.ExpireAt != 0 && m.ExpireAt <= tx.now {
		if tx.b != nil {
			if err := tx.dropKey(db, key, m); err != nil {
				return keyMeta{}, false, err
			}
			tx.note(Deleted, db, key)
		} else {
			tx.expired = append(tx.expired, Change{Kind: Deleted, DB: db, Key: append([]byte(nil), key...)})
		}
		return keyMeta{}, false, nil
	}
	return km, true, nil
}

// putMeta writes key's metadata record, keeping the expiry index, the
// scan index and the key counts in step with old (the record being
// replaced, nil if the key is being created).
func (tx *Tx) putMeta(db int, key []byte, m *storage.Meta, old *storage.Meta) error {
	if err := tx.writeMeta(db, key, m, old, false); err != nil {
		return err
	}
	return tx.stagePut(db, key, m)
}

// writeMeta is putMeta without staging the record for the cache: the
// caller stages it. lazy (a stream's record, with the metadata cache on)
// leaves the record to be encoded from what the caller stages when the
// batch wants it (encodeLazyMeta): m's Body is not read.
func (tx *Tx) writeMeta(db int, key []byte, m *storage.Meta, old *storage.Meta, lazy bool) error {
	if tx.b == nil {
		return ErrReadOnlyTx
	}
	if old == nil {
		if err := tx.b.Set(tx.scanKey(db, key), nil); err != nil {
			return err
		}
		tx.count(db, 1, hasTTL(m))
	} else {
		tx.count(db, 0, hasTTL(m)-hasTTL(old))
	}
	if old != nil && old.ExpireAt != 0 && old.ExpireAt != m.ExpireAt {
		if err := tx.b.Delete(storage.AppendExpiryKey(nil, old.ExpireAt, db, key)); err != nil {
			return err
		}
	}
	if m.ExpireAt != 0 && (old == nil || old.ExpireAt != m.ExpireAt) {
		if err := tx.b.Set(storage.AppendExpiryKey(nil, m.ExpireAt, db, key), nil); err != nil {
			return err
		}
	}
	tx.kbuf = storage.AppendMetaKey(tx.kbuf[:0], db, key)
	if lazy {
		tx.b.SetDeferredLazy(tx.kbuf)
		return nil
	}
	tx.vbuf = storage.AppendMeta(tx.vbuf[:0], m)
	if m.Type == storage.TypeStream {
		// Rewritten by every XADD: written once, when the group ends
		// (txbatch.go). A string's record is its value, of any size, and
		// is rarely rewritten within a group.
		tx.b.SetDeferred(tx.kbuf, tx.vbuf)
		return nil
	}
	return tx.b.Set(tx.kbuf, tx.vbuf)
}

// dropKey removes key: its metadata, expiry and scan index entries and
// its place in the key counts now, its data (if any) later through a
// garbage record.
func (tx *Tx) dropKey(db int, key []byte, m *storage.Meta) error {
	if tx.b == nil {
		return ErrReadOnlyTx
	}
	if err := tx.b.Delete(tx.scanKey(db, key)); err != nil {
		return err
	}
	tx.count(db, -1, -hasTTL(m))
	if m.ExpireAt != 0 {
		if err := tx.b.Delete(storage.AppendExpiryKey(nil, m.ExpireAt, db, key)); err != nil {
			return err
		}
	}
	if m.Type == storage.TypeStream {
		if err := tx.b.Set(storage.AppendGarbageKey(nil, m.Version), storage.EncodeGarbageValue(db, key)); err != nil {
			return err
		}
		tx.e.db.KickGC()
	}
	if err := tx.stage(db, key, true, &keyMeta{}); err != nil {
		return err
	}
	tx.kbuf = storage.AppendMetaKey(tx.kbuf[:0], db, key)
	return tx.b.Delete(tx.kbuf)
}

// SetOnCommit installs fn as Options.OnCommit, for a front end created
// after the engine (the server, wired by cmd/eddy). It must be called
// before the engine takes writes: the commit path reads it unguarded.
func (e *Engine) SetOnCommit(fn func(changes []Change)) { e.opts.OnCommit = fn }

// SetLimits installs fn as Options.Limits (nil: Redis's defaults), under
// the rule of SetOnCommit.
func (e *Engine) SetLimits(fn func() NodeLimits) {
	if fn == nil {
		fn = defaultLimits
	}
	e.opts.Limits = fn
}

func defaultLimits() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 100} }

// ReadCache lends the reads of one goroutine one store iterator while
// nothing is written (ViewWith): the event loop's reads share it. It is
// not safe for concurrent use.
type ReadCache struct{ c *storage.IterCache }

// NewReadCache returns a ReadCache over the engine's store.
func (e *Engine) NewReadCache() *ReadCache { return &ReadCache{c: e.db.NewIterCache()} }

// ReleaseStale drops the lent iterator if a write made it stale; the
// loop calls it at the end of each turn.
func (r *ReadCache) ReleaseStale() error { return r.c.ReleaseStale() }

// Release drops the lent iterator.
func (r *ReadCache) Release() error { return r.c.Release() }
