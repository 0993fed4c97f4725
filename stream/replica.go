package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// Replication support. On a primary, Options.OnApply hands every group's
// batch to the replication log, in commit order, while Engine.mu is still
// held: the log's order is the store's. On a replica, ApplyReplicated
// applies such a batch as it is and brings what the engine derives from
// storage (metadata cache, group cache, key counts, version high-water
// mark) back in step before readers can look, then reports the batch's
// changes to OnCommit so that blocked readers wake. A replica writes
// nothing of its own: SetFollower stops lazy expiry from deleting (Redis's
// replicas, too, report expired keys missing and wait for the primary's
// DEL).

// SetFollower says whether the engine follows a primary. A follower's
// reads report expired keys missing without deleting them.
func (e *Engine) SetFollower(on bool) { e.follower.Store(on) }

// Follower reports whether the engine follows a primary.
func (e *Engine) Follower() bool { return e.follower.Load() }

// Snapshot returns a view of the whole store holding whole groups only,
// having called at while no group could be applied: at records where the
// replication log stands, so that the view and that offset agree.
func (e *Engine) Snapshot(at func()) *storage.Snapshot {
	// Not Engine.mu alone: a group's batch is applied with it released,
	// so the snapshot could hold a batch that at does not count yet.
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if at != nil {
		at()
	}
	return e.db.NewSnapshot()
}

// ApplyReplicated applies a primary's batch (its representation, as
// OnApply gave it there) atomically, with the replica's position state
// in the same batch, then reloads what the engine derived from the
// records it touched. logged is called after the apply, still under
// Engine.mu, so that a replica of this replica sees the batch in its log
// in the store's order. Readers never see half of it: they hold Engine.mu
// shared. Finally changes go to OnCommit.
func (e *Engine) ApplyReplicated(repr, state []byte, changes []Change, logged func()) error {
	e.wmu.Lock()
	e.mu.Lock()
	err := e.db.ApplyRepr(repr, state)
	if err == nil {
		err = e.invalidateLocked(repr)
		if logged != nil {
			logged()
		}
	}
	e.mu.Unlock()
	e.wmu.Unlock()
	if err != nil {
		return err
	}
	if e.opts.OnCommit != nil && len(changes) > 0 {
		e.opts.OnCommit(changes)
	}
	return nil
}

// invalidateLocked forgets the cached state the records of repr may have
// changed, and reloads the key counts and version mark if they were
// written. Engine.mu is held exclusively.
func (e *Engine) invalidateLocked(repr []byte) error {
	var counts, versions, groups, all bool
	err := storage.ReprRecords(repr, func(op storage.ReprOp, key, val []byte) {
		if op == storage.ReprDeleteRange || op == storage.ReprOther {
			all = true
			return
		}
		switch storage.ClassifyKey(key) {
		case storage.ClassMeta:
			db, k, err := storage.DecodeMetaKey(key)
			if err != nil {
				break
			}
			if e.cache != nil && !all {
				e.cache.remove(db, k)
			}
			if op == storage.ReprSet {
				e.markReplicated(db, k, val)
			}
		case storage.ClassGroup:
			groups = true
		case storage.ClassCounts:
			counts = true
		case storage.ClassVersions:
			versions = true
		}
	})
	if err != nil || all {
		return e.reloadLocked()
	}
	if groups && e.gcache != nil {
		e.gcache.clear()
	}
	if counts {
		if err := e.loadKeyIndex(); err != nil {
			return err
		}
	}
	if versions {
		return e.loadVersionsLocked()
	}
	return nil
}

// markReplicated applies markIfLong to a stream whose metadata record a
// primary's batch wrote: a replica runs no XADD of its own to mark it.
func (e *Engine) markReplicated(db int, key, meta []byte) {
	if km, err := decodeKeyMeta(meta); err == nil && km.meta.Type == storage.TypeStream {
		e.markIfLong(db, key, km.meta.Version, &km.sm)
	}
}

// reloadLocked forgets every cached record and reloads the key counts and
// the version mark from storage. Engine.mu is held exclusively.
func (e *Engine) reloadLocked() error {
	if e.cache != nil {
		e.cache.flush(0, true)
	}
	if e.gcache != nil {
		e.gcache.clear()
	}
	if err := e.loadKeyIndex(); err != nil {
		return err
	}
	return e.loadVersionsLocked()
}

// loadVersionsLocked takes the version mark from storage, as Open does: a
// replica promoted to primary allocates above every version its primary
// may have used.
func (e *Engine) loadVersionsLocked() error {
	high, err := e.db.HighVersion()
	if err != nil {
		return err
	}
	e.nextVersion, e.highVersion = max(high, 1), high
	return nil
}

// FullSync loads a primary's snapshot in place of the whole store. While
// it is open the engine is locked: reads wait (a replica has nothing
// consistent to serve halfway), so the server answers -LOADING instead of
// starting them (replication.ReplicaConfig.Loading). Close it with Finish
// or Abort.
type FullSync struct {
	e      *Engine
	b      *storage.Batch
	bytes  int
	done   bool
	resume func() // restarts the store's garbage collector
}

// fullSyncBatchBytes is the size at which loading commits its batch.
const fullSyncBatchBytes = 4 << 20

// BeginFullSync locks the engine (writers and readers) and wipes the store (keeping its format
// record), so that only the primary's records follow. The store's garbage
// collector, which writes without the engine's lock, is paused until
// Finish or Abort: a pass that read the old garbage records could
// otherwise delete loaded data of the same versions.
func (e *Engine) BeginFullSync() (*FullSync, error) {
	resume := e.db.PauseGC()
	e.wmu.Lock()
	e.mu.Lock()
	b := e.db.NewBatch()
	if err := b.WipeForSync(); err != nil {
		b.Close()
		e.mu.Unlock()
		e.wmu.Unlock()
		resume()
		return nil, err
	}
	if err := b.Commit(); err != nil {
		e.mu.Unlock()
		e.wmu.Unlock()
		resume()
		return nil, err
	}
	return &FullSync{e: e, b: e.db.NewBatch(), resume: resume}, nil
}

// Put adds one record of the snapshot.
func (fs *FullSync) Put(key, value []byte) error {
	if err := fs.b.Set(key, value); err != nil {
		return err
	}
	fs.bytes += len(key) + len(value)
	if fs.bytes < fullSyncBatchBytes {
		return nil
	}
	err := fs.b.Commit()
	fs.b, fs.bytes = fs.e.db.NewBatch(), 0
	return err
}

// Finish commits the rest with the replica's position state, reloads
// every derived state, unlocks the engine and reports a flush of every
// database, so that blocked readers re-check and WATCH fails.
func (fs *FullSync) Finish(state []byte) error {
	if fs.done {
		return nil
	}
	fs.done = true
	e := fs.e
	err := fs.b.Set(storage.ReplStateKey(), state)
	if err != nil {
		fs.b.Close()
	} else if err = fs.b.Commit(); err == nil {
		err = e.db.SyncWAL()
	}
	if rerr := e.reloadLocked(); err == nil {
		err = rerr
	}
	e.mu.Unlock()
	e.wmu.Unlock()
	fs.resume()
	if err == nil && e.opts.OnCommit != nil {
		e.opts.OnCommit([]Change{{Kind: Flushed, AllDBs: true}})
	}
	return err
}

// Abort gives up a load: the store holds part of a snapshot and no
// position state, so the next sync is a full one. Derived state is
// reloaded from what is there.
func (fs *FullSync) Abort() error {
	if fs.done {
		return nil
	}
	fs.done = true
	fs.b.Close()
	err := fs.e.reloadLocked()
	fs.e.mu.Unlock()
	fs.e.wmu.Unlock()
	fs.resume()
	if fs.e.opts.OnCommit != nil {
		fs.e.opts.OnCommit([]Change{{Kind: Flushed, AllDBs: true}})
	}
	return err
}

// ReplState reads the replica's position record (ApplyReplicated writes
// it with each batch); ok is false when there is none.
func (e *Engine) ReplState() (state []byte, ok bool, err error) { return e.db.ReplState() }

// SetReplState writes the replica's position record (nil deletes it) and
// waits until it is durable.
func (e *Engine) SetReplState(state []byte) error { return e.db.SetReplState(state) }
