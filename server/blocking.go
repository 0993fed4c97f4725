package server

import (
	"errors"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/tidwall/redcon"
)

// blockKey names a key in a database.
type blockKey struct {
	db  int
	key string
}

// blockRegistry knows which clients wait on which keys.
type blockRegistry struct {
	mu    sync.Mutex
	byKey map[blockKey]map[*client]struct{} // guarded by mu
	keys  map[*client][]blockKey            // guarded by mu
	// woken are, per waiting client, the keys that woke it since it
	// registered or last looked (appended to; for anyChange clients also
	// deleted, replaced or flushed), in commit order and without repeats:
	// Redis serves a reader the key that was written first, even when
	// one EXEC wrote several of its keys.
	woken map[*client][][]byte // guarded by mu
	// anyChange holds the clients blocked in a command that writes
	// (XREADGROUP): besides appends, they wake when a key they wait on is
	// deleted, replaced, flushed or loses a consumer group, and answer as
	// Redis 7.0 does (UNBLOCKED, NOGROUP). XREAD ignores those changes.
	anyChange map[*client]bool // guarded by mu
}

func (r *blockRegistry) init() {
	r.byKey = make(map[blockKey]map[*client]struct{})
	r.keys = make(map[*client][]blockKey)
	r.woken = make(map[*client][][]byte)
	r.anyChange = make(map[*client]bool)
}

// wakeOnAnyChange marks c, registered by add, as woken by every change of
// its keys (see anyChange).
func (r *blockRegistry) wakeOnAnyChange(c *client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.keys[c]; ok {
		r.anyChange[c] = true
	}
}

// add registers c as waiting on keys of db.
func (r *blockRegistry) add(c *client, db int, keys [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		bk := blockKey{db, string(k)}
		m := r.byKey[bk]
		if m == nil {
			m = make(map[*client]struct{})
			r.byKey[bk] = m
		}
		m[c] = struct{}{}
		r.keys[c] = append(r.keys[c], bk)
	}
	if _, ok := r.keys[c]; !ok {
		r.keys[c] = nil
	}
	delete(r.woken, c)
	c.mu.Lock()
	c.blocked = true
	c.mu.Unlock()
	c.blockedNow.Store(true)
}

// remove forgets c's wait, if any.
func (r *blockRegistry) remove(c *client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys, ok := r.keys[c]
	if !ok {
		return
	}
	for _, bk := range keys {
		if m := r.byKey[bk]; m != nil {
			delete(m, c)
			if len(m) == 0 {
				delete(r.byKey, bk)
			}
		}
	}
	delete(r.keys, c)
	delete(r.woken, c)
	delete(r.anyChange, c)
	c.mu.Lock()
	c.blocked = false
	c.mu.Unlock()
	c.blockedNow.Store(false)
}

// count is INFO's blocked_clients.
func (r *blockRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys)
}

// takeWoken returns and forgets the keys that woke c since the last call,
// in commit order.
func (r *blockRegistry) takeWoken(c *client) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.woken[c]
	delete(r.woken, c)
	return w
}

// signal wakes the clients waiting on keys that were appended to (any
// change for anyChange clients), and notes the keys in the order of
// changes, which is commit order. As in Redis 7.0, a blocked XREAD ignores
// deletion and type changes.
func (r *blockRegistry) signal(changes []stream.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.keys) == 0 {
		return
	}
	for _, ch := range changes {
		if ch.Kind == stream.Flushed {
			r.signalFlushLocked(ch)
			continue
		}
		for c := range r.byKey[blockKey{ch.DB, string(ch.Key)}] {
			if ch.Kind != stream.Appended && !r.anyChange[c] {
				continue
			}
			r.noteWokenLocked(c, ch.Key)
			c.notifyBlocked()
		}
	}
}

// signalFlushLocked wakes the anyChange clients waiting on keys of the
// flushed database (of every database with AllDBs).
func (r *blockRegistry) signalFlushLocked(ch stream.Change) {
	for c := range r.anyChange {
		for _, bk := range r.keys[c] {
			if !ch.AllDBs && bk.db != ch.DB {
				continue
			}
			r.noteWokenLocked(c, []byte(bk.key))
			c.notifyBlocked()
		}
	}
}

// noteWokenLocked appends key to c's woken keys unless it is there.
func (r *blockRegistry) noteWokenLocked(c *client, key []byte) {
	for _, k := range r.woken[c] {
		if string(k) == string(key) {
			return
		}
	}
	r.woken[c] = append(r.woken[c], key)
}

// unblockRequest is CLIENT UNBLOCK's message to a blocked client.
// changed: the server became a replica (or followed another primary):
// the client gets errUnblockedChanged and is disconnected, as Redis's
// disconnectAllBlockedClients does.
type unblockRequest struct{ withError, changed bool }

// answer writes the reply u asks for to a blocked command waiting as req
// says, and reports whether the client is then disconnected.
func (u unblockRequest) answer(w *replyWriter, req *blockRequest) (disconnect bool) {
	switch {
	case u.changed:
		w.Error(errUnblockedChanged)
		return true
	case u.withError:
		w.Error(errUnblocked)
	default:
		req.onTimeout(w)
	}
	return false
}

// unblockAllChanged unblocks every blocked client because the server
// became a replica or changed primary (REPLICAOF host port).
func (s *Server) unblockAllChanged() {
	s.blocks.mu.Lock()
	defer s.blocks.mu.Unlock()
	for c := range s.blocks.keys {
		// It replaces a CLIENT UNBLOCK not served yet: only senders
		// holding blocks.mu send, so the send cannot block.
		select {
		case <-c.unblockCh:
		default:
		}
		c.unblockCh <- unblockRequest{changed: true}
		c.notifyBlocked()
	}
}

// unblock asks a blocked client to stop waiting; false if it was not
// blocked.
func (s *Server) unblock(c *client, withError bool) bool {
	s.blocks.mu.Lock()
	defer s.blocks.mu.Unlock()
	if _, ok := s.blocks.keys[c]; !ok {
		return false
	}
	select {
	case c.unblockCh <- unblockRequest{withError: withError}:
	default:
	}
	c.notifyBlocked()
	return true
}

// notifyBlocked tells the event loop that the blocked client's command
// may be served now (a key it waits on changed, CLIENT UNBLOCK).
func (c *client) notifyBlocked() {
	if f := c.loopNotify.Load(); f != nil {
		(*f)()
	}
}

// block parks the client of ctx until its blockRequest is served: the
// event loop keeps it (loop.go, park), with the commands behind the
// blocked one, and serves the command when it is woken or times out.
func (s *Server) block(ctx *cmdContext) {
	c := ctx.c
	req := ctx.block
	ctx.block = nil
	if req == nil {
		return
	}
	// drain a stale CLIENT UNBLOCK
	select {
	case <-c.unblockCh:
	default:
	}
	db := ctx.db
	if req.acks {
		db = ackDB
	}
	s.blocks.add(c, db, req.keys)
	if s.blockWrites(ctx) {
		s.blocks.wakeOnAnyChange(c)
	}
	// A write may have landed between the handler's read and the
	// registration: look once more, at the keys appended to since the
	// registration first (commit order), then at all in the command's.
	ctx.woken = append(s.blocks.takeWoken(c), req.keys...)
	served := s.retryLocked(ctx, req)
	ctx.woken = nil
	if served {
		s.blocks.remove(c)
		return
	}
	c.pending = &pendingBlock{ctx: *ctx, req: req}
	if req.timeout > 0 {
		c.pending.deadline = time.Now().Add(req.timeout)
	}
	c.pending.held = append([]redcon.Command(nil), c.backlog...)
}

// blockWrites reports whether the blocked command is a write
// (XREADGROUP), from its table entry: its retries run in an Update, and
// it wakes on every change of its keys (anyChange).
func (s *Server) blockWrites(ctx *cmdContext) bool {
	spec, _ := s.lookup(ctx.args)
	return spec != nil && spec.flags&flagWrite != 0
}

// pendingBlock is a command waiting in blocking.go.
type pendingBlock struct {
	ctx      cmdContext
	req      *blockRequest
	deadline time.Time // zero: forever
	// held are the commands of the client's pipeline behind the blocked
	// one, in a slice of their own, for the event loop to run once it is
	// served (park, unpark).
	held []redcon.Command
}

// retryBlocked re-runs the read of a blocked command in a fresh View.
func (s *Server) retryBlocked(ctx *cmdContext, req *blockRequest) bool {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.stopped {
		return false
	}
	return s.retryLocked(ctx, req)
}

// retryLocked is retryBlocked for a caller that holds the gate.
func (s *Server) retryLocked(ctx *cmdContext, req *blockRequest) bool {
	replied := false
	mark := len(ctx.w.buf)
	var err error
	if s.blockWrites(ctx) {
		// XREADGROUP delivers (PEL, last-delivered-id) when it is served; a
		// retry that serves nothing, or fails, leaves no trace.
		errsBefore := ctx.w.errs
		s.commitMu.RLock()
		err = s.update(ctx.c, func(tx *stream.Tx) error {
			ctx.tx = tx
			replied = req.retry(ctx)
			if !replied || ctx.w.errs > errsBefore {
				return errRollback
			}
			return nil
		})
		s.commitMu.RUnlock()
		if errors.Is(err, errRollback) {
			err = nil
		}
	} else {
		err = s.engine.ViewWith(ctx.c.iters, func(tx *stream.Tx) error {
			ctx.tx = tx
			replied = req.retry(ctx)
			return nil
		})
	}
	ctx.tx = nil
	if err != nil {
		ctx.w.buf = ctx.w.buf[:mark]
		ctx.w.Error(errorText(err))
		return true
	}
	return replied
}
