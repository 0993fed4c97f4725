package server

import (
	"errors"
	"io"
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

// notifyBlocked tells whoever serves the blocked client that its command
// may be served now (a key it waits on changed, CLIENT UNBLOCK): the
// event loop while the client is in it, else the client's goroutine.
func (c *client) notifyBlocked() {
	if f := c.loopNotify.Load(); f != nil {
		(*f)()
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// detachedState is a client served outside redcon's loop: one goroutine
// reads commands into a queue (so a disconnect is seen even while the
// client is blocked), the client's own goroutine runs them.
type detachedState struct {
	dc redcon.DetachedConn

	mu    sync.Mutex
	queue []redcon.Command // guarded by mu
	err   error            // guarded by mu: why reading stopped
	ready chan struct{}    // signalled when queue or err changes
	gone  chan struct{}    // closed when the socket failed (not a protocol error)
}

// detach takes the client out of redcon's loop.
func (s *Server) detach(c *client) {
	if c.detached != nil {
		return
	}
	if c.guard != nil {
		c.guard.detached.Store(true)
	}
	d := &detachedState{
		dc: c.conn.Detach(),
		// the rest of a pipeline servePipeline took from redcon
		queue: append([]redcon.Command(nil), c.backlog...),
		ready: make(chan struct{}, 1),
		gone:  make(chan struct{}),
	}
	c.backlog = nil
	c.detached = d
	s.detached.Add(1)
	go d.readLoop()
}

func (d *detachedState) readLoop() {
	for {
		cmd, err := d.dc.ReadCommand()
		d.mu.Lock()
		if err != nil {
			d.err = err
		} else {
			d.queue = append(d.queue, cmd)
		}
		d.mu.Unlock()
		select {
		case d.ready <- struct{}{}:
		default:
		}
		if err != nil {
			var pe *protoError
			if !errors.As(err, &pe) {
				close(d.gone)
			}
			return
		}
	}
}

// next returns the next queued command, or the read error once the queue
// is empty.
func (d *detachedState) next() (redcon.Command, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.queue) > 0 {
		cmd := d.queue[0]
		d.queue = d.queue[1:]
		return cmd, true, nil
	}
	return redcon.Command{}, false, d.err
}

// block parks the client of ctx until its blockRequest is served. It runs
// on the client's goroutine.
func (s *Server) block(ctx *cmdContext) {
	c := ctx.c
	req := ctx.block
	ctx.block = nil
	if req == nil {
		return
	}
	// drain a stale CLIENT UNBLOCK and wake-up
	select {
	case <-c.unblockCh:
	default:
	}
	select {
	case <-c.wake:
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
	if c.inLoop() {
		// The event loop keeps the client and serves the command when
		// it is woken or times out (loop_linux.go, park); the commands
		// behind it wait there.
		c.pending.held = append([]redcon.Command(nil), c.backlog...)
		return
	}
	s.detach(c)
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

// serveDetached serves a client that left redcon's loop, until it goes
// away. It runs on the client's goroutine.
func (s *Server) serveDetached(c *client) {
	d := c.detached
	defer func() {
		d.dc.Flush()
		d.dc.Close()
		s.dropClient(c)
		s.detached.Done()
	}()
	for {
		if c.pending != nil {
			if !s.waitBlocked(c) {
				return
			}
			continue
		}
		cmd, ok, err := d.next()
		if !ok {
			if err != nil {
				var pe *protoError
				if errors.As(err, &pe) {
					c.w.Error(errProtocol(pe))
					c.flushTo(d.dc)
				}
				if err != io.EOF && !errors.As(err, &pe) {
					s.logger.Debug("client read failed", "id", c.id, "err", err)
				}
				return
			}
			if d.dc.Flush() != nil {
				return
			}
			select {
			case <-d.ready:
			case <-s.done:
				return
			}
			continue
		}
		s.dispatch(c, cmd.Args)
		c.flushTo(d.dc)
		if c.quitting {
			return
		}
	}
}

// waitBlocked waits for the pending blocked command to be served; false
// means the client is gone.
func (s *Server) waitBlocked(c *client) bool {
	p := c.pending
	d := c.detached
	if d.dc.Flush() != nil {
		s.blocks.remove(c)
		return false
	}
	var timer <-chan time.Time
	if !p.deadline.IsZero() {
		t := time.NewTimer(time.Until(p.deadline))
		defer t.Stop()
		timer = t.C
	}
	finish := func() {
		s.blocks.remove(c)
		c.pending = nil
		c.flushTo(d.dc)
	}
	for {
		select {
		case <-c.wake:
			p.ctx.w = &c.w
			p.ctx.woken = s.blocks.takeWoken(c)
			if len(p.ctx.woken) == 0 {
				continue // already looked at by an earlier retry
			}
			if s.retryBlocked(&p.ctx, p.req) {
				finish()
				return true
			}
		case <-timer:
			p.req.onTimeout(&c.w)
			finish()
			return true
		case u := <-c.unblockCh:
			disconnect := u.answer(&c.w, p.req)
			finish()
			return !disconnect // false: disconnected after the reply
		case <-d.gone:
			s.blocks.remove(c)
			return false
		case <-s.done:
			s.blocks.remove(c)
			return false
		}
	}
}
