package stream

import (
	"errors"
	"io"
	"log/slog"
	"sync"
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
	// with the keys it changed. It must not call back into the Engine
	// synchronously with a write.
	OnCommit func(changes []Change)
	// Now returns the current time in unix milliseconds; nil means the
	// wall clock.
	Now    func() int64
	Logger *slog.Logger

	// scanHash replaces storage.ScanHash, so that tests can make keys
	// collide. It orders the scan index on disk: never set outside tests.
	scanHash func(key []byte) uint64
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
// Update for writes; an Update's writes are one storage batch.
//
// Lock order: Engine.mu before anything in storage.
type Engine struct {
	db   *storage.DB
	opts Options

	mu          sync.RWMutex // writers hold it exclusively while building and applying a batch
	nextVersion uint64       // guarded by mu (write)
	highVersion uint64       // guarded by mu (write): persisted bound; every version used is below it
	// counts holds, per database, the committed metadata records and how
	// many carry an expiry: DBSIZE and INFO keyspace (keyindex.go).
	counts map[int]keyCounts // guarded by mu (written with mu held exclusively)
}

// Open returns an Engine over db.
func Open(db *storage.DB, opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Limits == nil {
		opts.Limits = func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 100} }
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
	e := &Engine{db: db, opts: opts, nextVersion: max(high, 1), highVersion: high}
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
	r       reader
	b       *storage.Batch // nil in View
	now     int64
	changes []Change
	buf     []byte
	deltas  map[int]keyCounts // changes to Engine.counts, made there once the batch is applied
	expired []Change          // View only: expired keys met, deleted once the View ends
}

// View runs fn with a read-only transaction.
func (e *Engine) View(fn func(tx *Tx) error) error {
	e.mu.RLock()
	tx := &Tx{e: e, r: e.db, now: e.opts.Now()}
	err := fn(tx)
	e.mu.RUnlock()
	if len(tx.expired) > 0 {
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
	return err
}

// Update runs fn with a write transaction and commits its writes as one
// batch, unless fn returns an error, in which case nothing is written.
// Update returns once the batch is as durable as the sync mode requires.
func (e *Engine) Update(fn func(tx *Tx) error) error {
	e.mu.Lock()
	b := e.db.NewBatch()
	tx := &Tx{e: e, r: b, b: b, now: e.opts.Now()}
	err := fn(tx)
	if err == nil {
		err = tx.writeCounts()
	}
	if err != nil {
		e.mu.Unlock()
		b.Close()
		return err
	}
	if b.Empty() {
		e.mu.Unlock()
		b.Close()
		return nil
	}
	err = b.Apply()
	if err == nil {
		tx.applyCounts()
	}
	e.mu.Unlock()
	b.Close()
	if err != nil {
		return err
	}
	if err := e.db.WaitDurable(); err != nil {
		return err
	}
	if e.opts.OnCommit != nil && len(tx.changes) > 0 {
		e.opts.OnCommit(tx.changes)
	}
	return nil
}

// Now is the transaction's clock (unix ms), fixed for its duration as Redis
// fixes the time for one command.
func (tx *Tx) Now() int64 { return tx.now }

// Writable reports whether the transaction may write.
func (tx *Tx) Writable() bool { return tx.b != nil }

func (tx *Tx) note(kind ChangeKind, db int, key []byte) {
	tx.changes = append(tx.changes, Change{Kind: kind, DB: db, Key: append([]byte(nil), key...)})
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
// (and, in a write transaction, deleted: lazy expiry).
func (tx *Tx) lookup(db int, key []byte) (storage.Meta, bool, error) {
	tx.buf = storage.AppendMetaKey(tx.buf[:0], db, key)
	v, ok, err := tx.r.Get(tx.buf)
	if err != nil || !ok {
		return storage.Meta{}, false, err
	}
	m, err := storage.DecodeMeta(v)
	if err != nil {
		return m, false, err
	}
	if m.ExpireAt != 0 && m.ExpireAt <= tx.now {
		if tx.b != nil {
			if err := tx.dropKey(db, key, &m); err != nil {
				return m, false, err
			}
			tx.note(Deleted, db, key)
		} else {
			tx.expired = append(tx.expired, Change{Kind: Deleted, DB: db, Key: append([]byte(nil), key...)})
		}
		return storage.Meta{}, false, nil
	}
	return m, true, nil
}

// putMeta writes key's metadata record, keeping the expiry index, the
// scan index and the key counts in step with old (the record being
// replaced, nil if the key is being created).
func (tx *Tx) putMeta(db int, key []byte, m *storage.Meta, old *storage.Meta) error {
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
	return tx.b.Set(storage.AppendMetaKey(nil, db, key), storage.AppendMeta(nil, m))
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
	return tx.b.Delete(storage.AppendMetaKey(nil, db, key))
}
