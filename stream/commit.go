package stream

import (
	"errors"
	"github.com/eddy-streams/eddy/storage"
	"slices"
)

// Group commit. Concurrent Update calls queue their functions; the first
// caller to find no leader becomes the leader, takes the whole queue and
// runs the functions in turn, holding Engine.wmu (the store has one writer
// at a time) but not Engine.mu, inside ONE transaction and so ONE batch:
// each function sees what the ones before it wrote. Readers go on while
// the group is built, since nothing of it is visible until it is applied:
// the batch is unapplied and the changes to the caches are staged in the
// transaction. The batch is applied once, and the metadata cache and key
// counts published once under Engine.mu held exclusively, so a View sees a
// group whole or not at all. The leader then hands leadership to the oldest
// caller queued meanwhile, which builds the next group while this one
// waits for its single sync; the syncer merges waits that overlap.
// Finally the leader reports each function's changes to OnCommit, in the
// group's order, and wakes the callers with their own results.
//
// A function that fails leaves no trace: before each function the leader
// takes a savepoint of the transaction (batch mark with the deferred
// writes, lengths of changes, staged metadata and undo log, the version
// counters), and a failure rolls back to it. Writes to state that
// outlives one function — staged metadata, key-count deltas — log the
// value they replace in Tx.undo, which the rollback replays backwards. A
// rollback that must discard batch writes copies the group's batch up to
// the mark (storage's RollbackTo); failures that come before any write,
// the usual case, cost nothing.
//
// Records every XADD rewrites — a stream's metadata record and tail node
// — reach the batch once per group, with their last value, not once per
// function (txbatch.go): the group's memtable writes shrink with its size.
//
// A function that wrote nothing (it failed, or only read) is answered as
// soon as the group's batch is applied, without waiting for the sync, as
// an Update with an empty batch always was. An UpdateApplied's caller
// makes its writes durable itself before it acknowledges them: a group of
// only those waits for no sync; in a group with Updates that wrote, it is
// answered with them, after the sync.
//
// Locking: Engine.qmu guards the queue and is held alone, never with
// Engine.mu. Functions run in the leader's goroutine, one at a time; the
// caller that queued one is blocked until it is answered, so the function
// may use the caller's state freely.

// maxGroupBytes bounds a group's batch: once it is larger, the leader
// takes no more functions and leaves the rest to the next group, so one
// group's latency and memory stay bounded.
const maxGroupBytes = 1 << 20

// commitReq is one Update call in the commit queue.
type commitReq struct {
	fn       func(tx *Tx) error
	err      error
	panicked any  // what fn panicked with, re-raised in the caller
	wrote    bool // fn succeeded and wrote to the batch
	applied  bool // answer once applied: the caller makes it durable (UpdateApplied)
	lo, hi   int  // fn's changes: tx.changes[lo:hi]
	wake     chan wakeKind
}

// wakeKind says why a queued caller was woken.
type wakeKind uint8

const (
	// wakeDone: the request was answered; err holds the result.
	wakeDone wakeKind = iota
	// wakeLead: the caller is now the leader, its request first in the
	// queue.
	wakeLead
)

func (e *Engine) newReq(fn func(tx *Tx) error) *commitReq {
	r, _ := e.reqs.Get().(*commitReq)
	if r == nil {
		r = &commitReq{wake: make(chan wakeKind, 1)}
	}
	r.fn = fn
	return r
}

func (e *Engine) freeReq(r *commitReq) {
	r.fn, r.err, r.panicked, r.wrote, r.applied, r.lo, r.hi = nil, nil, nil, false, false, 0, 0
	e.reqs.Put(r)
}

// Update runs fn with a write transaction and commits its writes
// atomically, unless fn returns an error, in which case nothing it did is
// kept. Concurrent Updates share a batch and a sync (group commit, see
// above); each sees the writes of those committed before it. Update
// returns once fn's writes are as durable as the sync mode requires, and
// OnCommit has been told of them.
func (e *Engine) Update(fn func(tx *Tx) error) error {
	return e.update(fn, false)
}

// UpdateApplied is Update, but returns once fn's writes are applied
// (visible, and told to OnCommit) without waiting for a sync: while
// RepliesWaitForSync, the caller makes them durable before acknowledging
// them, with SyncApplied (durability.go). The event loop does so for a
// whole turn's replies, as Redis writes its replies after the AOF's
// fsync.
func (e *Engine) UpdateApplied(fn func(tx *Tx) error) error {
	return e.update(fn, true)
}

func (e *Engine) update(fn func(tx *Tx) error, applied bool) error {
	r := e.newReq(fn)
	r.applied = applied
	e.qmu.Lock()
	e.queue = append(e.queue, r)
	lead := !e.leading
	e.leading = true
	e.qmu.Unlock()
	if lead || <-r.wake == wakeLead {
		e.lead(r)
	}
	err, p := r.err, r.panicked
	e.freeReq(r)
	if p != nil {
		panic(p)
	}
	return err
}

// CommitStats counts what the engine's group commits wrote since it was
// opened. Updates that wrote nothing (failed, or only read) count in
// neither.
type CommitStats struct {
	Batches uint64 // groups whose writes were applied, each as one batch
	Writes  uint64 // Updates whose writes those batches carried
}

// CommitStats reports the engine's group commits: writes per batch say
// how many concurrent writers shared each.
func (e *Engine) CommitStats() CommitStats {
	return CommitStats{Batches: e.batches.Load(), Writes: e.batchWrites.Load()}
}

// lead commits one group, self's request first, and answers every
// request in it. self is first in the queue.
func (e *Engine) lead(self *commitReq) {
	e.qmu.Lock()
	group := e.queue
	e.queue, e.spare = e.spare, nil
	e.qmu.Unlock()

	tx, n, applied := e.runGroup(group)

	// Hand over before waiting for the sync, so that the next group is
	// built while this one's sync runs.
	e.qmu.Lock()
	if n < len(group) {
		e.queue = append(slices.Clone(group[n:]), e.queue...)
	}
	if len(e.queue) > 0 {
		e.queue[0].wake <- wakeLead
	} else {
		e.leading = false
	}
	e.qmu.Unlock()
	group = group[:n]

	e.groups.Add(1)
	e.grouped.Add(uint64(n))
	for i, r := range group {
		if !r.wrote && r != self {
			r.wake <- wakeDone
			group[i] = nil
		}
	}
	var err error
	if applied {
		writers, waiting := 0, 0
		for _, r := range group {
			if r != nil && r.wrote {
				writers++
				if !r.applied {
					waiting++
				}
			}
		}
		e.batches.Add(1)
		e.batchWrites.Add(uint64(writers))
		if waiting > 0 {
			err = e.db.WaitDurable(waiting)
		} else {
			e.db.NoteApplied()
		}
	}
	for i, r := range group {
		if r == nil || !r.wrote {
			continue
		}
		if err != nil {
			r.err = err
		} else if e.opts.OnCommit != nil && r.hi > r.lo {
			// OnCommit may keep the keys (each is its own copy) but not
			// the slice, which the next transaction reuses.
			e.opts.OnCommit(tx.changes[r.lo:r.hi:r.hi])
		}
		if r != self {
			r.wake <- wakeDone
			group[i] = nil
		}
	}
	e.freeTx(tx)
	clear(group)
	e.qmu.Lock()
	if e.spare == nil {
		e.spare = group[:0]
	}
	e.qmu.Unlock()
}

// runGroup runs the functions of group in order in one transaction, as
// many as fit in maxGroupBytes (at least one), and applies the batch. It
// returns the transaction (its changes are OnCommit's), how many requests
// it took, and whether a batch was applied. Each request taken has its
// result, unless it wrote and the sync is still to come.
func (e *Engine) runGroup(group []*commitReq) (tx *Tx, n int, applied bool) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	b := e.db.NewBatch()
	defer b.Close()
	tx = e.newTx(b, b)
	start := tx.savepoint()
	var err error
	for n < len(group) {
		r := group[n]
		n++
		sp := tx.savepoint()
		r.panicked, r.err = tx.run(r.fn)
		r.wrote = r.err == nil && tx.b.Mark() != sp.batch
		if !r.wrote {
			// A failure leaves nothing; a function that wrote nothing
			// publishes nothing either, as an empty Update never did.
			if err = tx.rollback(sp); err != nil {
				break
			}
			continue
		}
		r.lo, r.hi = sp.changes, len(tx.changes)
		if b.Len() > maxGroupBytes {
			break
		}
	}
	if err == nil {
		err = tx.b.flush()
	}
	if err == nil {
		err = tx.writeCounts()
	}
	if err == nil && !b.Empty() {
		if err = e.apply(tx, b); err == nil {
			applied = true
		}
	}
	if err != nil {
		// Nothing of the group was applied.
		e.nextVersion, e.highVersion = start.nextVersion, start.highVersion
		for _, r := range group[:n] {
			if r.wrote {
				r.err, r.wrote = err, false
			}
		}
	}
	return tx, n, applied
}

// apply applies the group's batch and publishes what it changed. Readers
// go on while Pebble applies (a write stall must not stop them): those
// that began before are waited for first, since they read storage and the
// caches without a snapshot, and those that begin meanwhile read through
// a snapshot, since nothing is published yet. The caller holds Engine.wmu.
func (e *Engine) apply(tx *Tx, b *storage.Batch) error {
	e.mu.Lock()
	e.applying.Store(true)
	e.mu.Unlock()
	if e.opts.applyHook != nil {
		e.opts.applyHook(false)
	}
	err := b.Apply()
	if e.opts.applyHook != nil {
		e.opts.applyHook(true)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applying.Store(false)
	if err != nil {
		return err
	}
	if e.opts.OnApply != nil {
		e.opts.OnApply(b.Repr(), tx.changes)
	}
	tx.applyCounts()
	tx.publish()
	tx.publishGroups()
	return nil
}

// run runs one function of a group with the transaction's clock set
// anew, as each command has its own. A panic is caught so that the
// leader can go on; the caller re-raises it.
func (tx *Tx) run(fn func(tx *Tx) error) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, err = p, errPanicked
		}
	}()
	tx.now = tx.e.opts.Now()
	tx.refs, tx.nrefs = [2]streamRef{}, 0
	return nil, fn(tx)
}

// errPanicked is the result of a function that panicked; its caller
// panics again with the same value instead of returning it.
var errPanicked = errors.New("stream: transaction function panicked")

// Savepoint is a point in a write transaction that RollbackTo returns
// to.
type Savepoint struct{ sp savepoint }

// Savepoint returns the transaction's current point. A function that runs
// several commands in one Update (a pipeline) takes one before each
// command, so that a command that fails can be undone alone while the
// others commit.
func (tx *Tx) Savepoint() Savepoint {
	if tx.b == nil {
		return Savepoint{}
	}
	return Savepoint{tx.savepoint()}
}

// RollbackTo undoes everything the transaction did since sp was taken in
// the same call of the Update's function: writes, noted changes, staged
// metadata, key counts and versions. Iterators opened since must be
// closed first. After an error the transaction is unusable: the function
// must return an error, which discards all of it.
func (tx *Tx) RollbackTo(sp Savepoint) error {
	if tx.b == nil {
		return ErrReadOnlyTx
	}
	return tx.rollback(sp.sp)
}

// savepoint is where a write transaction stood before one function of a
// group ran.
type savepoint struct {
	batch                         txMark
	changes, staged, undo, groups int
	nextVersion, highVersion      uint64
}

func (tx *Tx) savepoint() savepoint {
	return savepoint{
		batch:       tx.b.Mark(),
		changes:     len(tx.changes),
		staged:      len(tx.staged),
		undo:        len(tx.undo),
		groups:      len(tx.groups.log),
		nextVersion: tx.e.nextVersion,
		highVersion: tx.e.highVersion,
	}
}

// undoKind says what an undo record restores.
type undoKind uint8

const (
	// undoStaged: staged[i] held st.
	undoStaged undoKind = iota
	// undoDelta: deltas[db] held d (had false: there was none).
	undoDelta
	// undoFlush: staged, flushed and flushedAll were as copied here.
	undoFlush
)

// undoRec is the value a write to transaction state replaced, for
// rollback.
type undoRec struct {
	kind       undoKind
	i          int
	st         stagedMeta
	db         int
	d          keyCounts
	had        bool
	staged     []stagedMeta
	flushed    []int
	flushedAll bool
}

// rollback undoes everything done since sp: batch writes, changes,
// staged metadata, key-count deltas and versions allocated (with the
// high-water mark, whose record was in the discarded writes).
func (tx *Tx) rollback(sp savepoint) error {
	err := tx.b.RollbackTo(sp.batch)
	clear(tx.changes[sp.changes:])
	tx.changes = tx.changes[:sp.changes]
	reindex := len(tx.staged) != sp.staged
	for i := len(tx.undo) - 1; i >= sp.undo; i-- {
		u := &tx.undo[i]
		switch u.kind {
		case undoStaged:
			tx.staged[u.i] = u.st
		case undoDelta:
			if u.had {
				tx.deltas[u.db] = u.d
			} else {
				delete(tx.deltas, u.db)
			}
		case undoFlush:
			clear(tx.staged)
			tx.staged = append(tx.staged[:0], u.staged...)
			tx.flushed = append(tx.flushed[:0], u.flushed...)
			tx.flushedAll = u.flushedAll
			reindex = true
		}
	}
	clear(tx.undo[sp.undo:])
	tx.undo = tx.undo[:sp.undo]
	tx.groups.rollback(sp.groups)
	clear(tx.staged[sp.staged:])
	tx.staged = tx.staged[:sp.staged]
	if reindex {
		tx.stagedIx = nil
		if len(tx.staged) >= stagedIndexMin {
			tx.stagedIx = make(map[string]int, 2*len(tx.staged))
			for i := range tx.staged {
				tx.stagedIx[stagedName(tx.staged[i].db, tx.staged[i].key)] = i
			}
		}
	}
	tx.e.nextVersion, tx.e.highVersion = sp.nextVersion, sp.highVersion
	return err
}
