package server

import (
	"container/heap"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/server/poll"
	"github.com/eddy-streams/eddy/stream"
	"github.com/tidwall/redcon"
)

// The event loop is how every client is served, on every system: one
// thread waits for the client sockets that are ready (package poll:
// epoll on Linux, kqueue on macOS and the BSDs, goroutines reading ahead
// elsewhere), reads what is ready, runs the commands through serveRESP
// and writes the replies, the way Redis serves. A goroutine per client
// (what Eddy did at first, with redcon) costs each request two goroutine
// switches and a write of its own, which capped unpipelined requests
// well below Redis's rate (bench/results/HISTORY.md, 2026-12-01).
//
// One thread running commands one after the other cannot rely on Pebble
// to group concurrent commits, so each turn runs the writes of every
// client that sent only groupable writes in one Engine.Update
// (runGroups): one batch and one sync for the whole turn.
//
// With appendfsync always the loop's writes are applied without waiting
// for the sync (Server.update, Engine.UpdateApplied); instead no reply
// leaves until a sync covers every write applied before it (hold), as
// Redis writes its replies after the AOF's fsync. A turn with few writes
// syncs before it ends, as before. After a large group (syncAheadMin
// writes, a pipelined load) the loop leaves the sync running on a
// goroutine and goes on reading and applying the next writes, whose
// replies wait for the sync after it; the sync in flight pokes the loop
// when it ends (release). That overlap raised pipelined writes with
// appendfsync always, but cost unpipelined ones, where a sync's group is
// the writers that came back and each tiny group would be applied alone,
// so small turns keep waiting (bench/results/HISTORY.md, "The big
// groups' syncs").
//
// A client whose command blocks (XREAD BLOCK, WAIT) stays in the loop,
// parked: its socket is watched only for a hangup, the commands behind
// the blocked one are held, and the loop retries the command when a
// commit (or a replica's acknowledgement) wakes it (notifyBlocked,
// through the poller's Wake), or answers it when its timeout passes, as
// Redis does. A wake-up of many readers is then one thread writing their
// replies, not a goroutine each to schedule (bench/wakebench).
//
// A client leaves the loop for a goroutine of its own, for good, when its
// connection becomes a replication link (PSYNC): detach hands the socket
// over as a net.Conn, with the replies in flight written.

// loopReadSize is how much one read takes from a socket, Redis's
// PROTO_IOBUF_LEN: a client's share of a turn stays small, so the others
// wait less, and pipelined XADDs ran faster than with 64 KB
// (bench/results/HISTORY.md, "The network path"). loopKeepOut is the
// largest reply buffer a client keeps between turns.
const (
	loopReadSize = 16 << 10
	loopKeepOut  = 16 << 10
)

// eventLoop is the loop; run owns everything but the fields under
// loopConn.mu, the poller's Wake and the woken clients (wokenMu).
type eventLoop struct {
	s     *Server
	p     *poll.Poller
	lnFDs map[int]bool // the listeners' descriptors in p
	conns map[int]*loopConn
	buf   []byte
	now   time.Time // when the turn's wait ended
	args  [][]byte  // arena for the arguments of parsed commands, never reused
	// iters lends the reads of the loop's clients one iterator while
	// nothing is written; released when stale at the end of each turn.
	iters *stream.ReadCache
	ready []*loopConn // clients with commands to run this turn
	carry []*loopConn // groupable clients left for the next turn (groupMax)
	// carries counts the clients left for a next turn, for tests.
	carries atomic.Int64
	groups  []groupPart

	acceptWarned time.Time // when running out of descriptors was last logged

	// Parked clients whose blocked command may be served now
	// (wakeClient, from any goroutine), and the deadlines of blocked
	// commands.
	wokenMu    sync.Mutex
	woken      []*loopConn // guarded by wokenMu
	wokenSent  bool        // guarded by wokenMu: a byte is on its way through the wake pipe
	wokenSpare []*loopConn
	timers     parkTimers
	// shared holds, for one pass of serveWoken, the replies of the
	// blocked commands served in it that others may share
	// (blockRequest.share, with the keys that woke them).
	shared map[string][]byte

	// Replies held until a log sync covers the writes before them
	// (appendfsync always; hold): the clients, in the order they were
	// held, and the sync in flight, which reports on synced. While one
	// is in flight the loop never blocks in epoll (it waits on synced
	// instead, waitUnlocked), so the sync need not poke it.
	held         []*loopConn
	syncing      bool
	synced       chan error
	syncWait     *time.Timer // waitUnlocked's, made on first use
	grouped      int         // writes run in groups this turn
	syncedWrites uint64      // the engine's commit writes when the last sync started

	stopOnce sync.Once
	stopping chan struct{}
}

// newEventLoop prepares a loop over lns.
func newEventLoop(s *Server, lns []net.Listener) (*eventLoop, error) {
	p, err := poll.New()
	if err != nil {
		return nil, fmt.Errorf("event loop: %w", err)
	}
	l := &eventLoop{
		s:        s,
		p:        p,
		lnFDs:    make(map[int]bool),
		conns:    make(map[int]*loopConn),
		buf:      make([]byte, loopReadSize),
		iters:    s.engine.NewReadCache(),
		stopping: make(chan struct{}),
		synced:   make(chan error, 1),
	}
	for _, ln := range lns {
		fd, err := p.AddListener(ln)
		if err != nil {
			p.Shut()
			return nil, fmt.Errorf("event loop: %w", err)
		}
		l.lnFDs[fd] = true
	}
	return l, nil
}

// stop makes run return; it may be called from any goroutine, more than
// once.
func (l *eventLoop) stop() {
	l.stopOnce.Do(func() {
		close(l.stopping)
		l.p.Wake()
	})
}

// wakeClient asks the loop to retry lc's blocked command; any goroutine
// may call it (notifyBlocked).
func (l *eventLoop) wakeClient(lc *loopConn) {
	l.wokenMu.Lock()
	if !lc.wokenQueued {
		lc.wokenQueued = true
		l.woken = append(l.woken, lc)
	}
	send := !l.wokenSent
	l.wokenSent = true
	l.wokenMu.Unlock()
	if send {
		l.p.Wake()
	}
}

// run serves until stop. The clients still in the loop are disconnected
// when it returns.
func (l *eventLoop) run() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer l.p.Shut()
	defer l.iters.Release()
	defer func() {
		l.settle()
		for _, lc := range l.conns {
			l.drop(lc)
		}
	}()
	evs := make([]poll.Event, 256)
	lastSweep := time.Now()
	for {
		n, woken, err, waited := l.wait(evs)
		if err != nil {
			return fmt.Errorf("event loop: %w", err)
		}
		if woken {
			select {
			case <-l.stopping:
				return nil
			default:
			}
		}
		if waited {
			continue // for the sync in flight, not for a socket
		}
		// One clock read a turn for the reads' times (the idle timeout):
		// one a read cost the loop measurably, unpipelined.
		l.now = time.Now()
		for _, ev := range evs[:n] {
			l.event(ev)
		}
		l.turn()
		if now := time.Now(); now.Sub(lastSweep) >= time.Second {
			lastSweep = now
			l.sweepIdle(now)
		}
	}
}

// wait waits for the next turn's events: at most a second, less when a
// blocked command's deadline comes sooner, not at all when clients were
// carried over. With a sync in flight and no socket ready it waits for
// the sync instead (waitUnlocked), finishes it, and reports waited.
func (l *eventLoop) wait(evs []poll.Event) (n int, woken bool, err error, waited bool) {
	wait := time.Second
	if len(l.ready) > 0 {
		wait = 0 // clients carried over from the last turn
	} else if len(l.timers) > 0 {
		wait = max(0, min(wait, time.Until(l.timers[0].at)))
	}
	if wait == 0 || !l.syncing {
		n, woken, err = l.p.Wait(evs, wait)
		return n, woken, err, false
	}
	if n, woken, err = l.p.Wait(evs, 0); n > 0 || woken || err != nil {
		return n, woken, err, false
	}
	if done, err := l.waitUnlocked(); done {
		l.syncDone(err)
	}
	return 0, false, nil, true
}

// event handles one socket the wait reported.
func (l *eventLoop) event(ev poll.Event) {
	if l.lnFDs[ev.FD] {
		l.accept(ev.FD)
		return
	}
	lc := l.conns[ev.FD]
	switch {
	case lc == nil:
	case lc.held:
		// Its replies wait for a sync: nothing is read or written until
		// then, and the socket is not watched (it is level-triggered),
		// unless it is gone.
		if ev.HangUp {
			l.drop(lc)
		} else if !lc.mute {
			lc.mute = true
			l.p.Modify(lc.fd, poll.None)
		}
	case lc.blockedOut:
		if ev.HangUp {
			l.drop(lc)
			return
		}
		l.send(lc) // released already: held replies are muted above
	case lc.parked:
		// Only a hangup is watched while it is blocked.
		l.drop(lc)
	case lc.queued:
		// Carried over: its commands run first, then it is read again
		// (an end of stream must not drop commands already read).
	default:
		l.read(lc)
	}
}

// turn runs what the turn's reads, wake-ups and deadlines brought: the
// replies a finished sync covered, the blocked commands woken, the
// commands read (one group for the writes), the readers those writes
// woke, and the sync the held replies wait for.
func (l *eventLoop) turn() {
	l.release()
	l.serveWoken()
	if len(l.timers) > 0 {
		l.expireParked(time.Now())
	}
	l.serveReady()
	// Readers woken by this turn's writes are answered in it.
	l.serveWoken()
	l.syncHeld(l.grouped < syncAheadMin)
	l.grouped = 0
	if err := l.iters.ReleaseStale(); err != nil {
		l.s.logger.Warn("event loop: iterator", "err", err)
	}
}

// accept takes every pending connection of the listening socket lfd.
func (l *eventLoop) accept(lfd int) {
	for {
		fd, remote, local, err := l.p.Accept(lfd)
		if err == poll.ErrTooManyFiles {
			// The connection stays pending and the listener ready, so
			// this repeats every turn until a descriptor is freed.
			if now := time.Now(); now.Sub(l.acceptWarned) >= time.Second {
				l.acceptWarned = now
				l.s.logger.Warn("accept failed: out of file descriptors", "err", err)
			}
			return
		}
		if err != nil {
			return // nothing more pending
		}
		lc := &loopConn{l: l, fd: fd, addr: remote, laddr: local, lastRead: time.Now(), timerIx: -1}
		lc.g = &guardConn{}
		if !l.s.accept(lc) {
			// maxclients: accept left the error in out.
			l.p.Write(fd, lc.out)
			l.p.Close(fd)
			continue
		}
		c := lc.c
		lc.g.c = c
		c.iters = l.iters
		notify := func() { l.wakeClient(lc) }
		c.loopNotify.Store(&notify)
		if err := l.p.Add(fd, poll.Readable); err != nil {
			l.s.logger.Warn("client not served", "err", err)
			l.drop(lc)
			continue
		}
		l.conns[fd] = lc
	}
}

// read takes what the socket has, frames it through the client's guard
// and parses the complete commands; the client then waits in ready.
func (l *eventLoop) read(lc *loopConn) {
	n, err := l.p.Read(lc.fd, l.buf)
	if err == poll.ErrWouldBlock {
		return
	}
	if n <= 0 {
		l.drop(lc) // EOF, a reset, or CLIENT KILL's shutdown
		return
	}
	lc.lastRead = l.now
	l.s.stats.netInput.Add(int64(n))
	g := lc.g
	perr := g.feed(l.buf[:n])
	// The guard noted each argument's place as it framed the bytes:
	// the commands are taken without parsing them again.
	lc.cmds, l.args = g.takeCommands(lc.cmds, l.args)
	lc.perr = perr
	if (len(lc.cmds) > 0 || perr != nil) && !lc.queued {
		lc.queued = true
		l.ready = append(l.ready, lc)
	}
}

// serveReady runs the commands of the clients read this turn and writes
// their replies.
func (l *eventLoop) serveReady() {
	if len(l.ready) == 0 {
		return
	}
	s := l.s
	// Writes of every client that sent only groupable writes: one group.
	groups, total := l.groups[:0], 0
	most := groupMax
	if s.engine.RepliesWaitForSync() {
		most = groupMaxSynced
	}
	for _, lc := range l.ready {
		lc.grouped = false
		if lc.perr != nil || lc.gone {
			continue
		}
		c := lc.c
		specs := lc.specs[:0]
		for _, cmd := range lc.cmds {
			spec := s.groupable(c, cmd.Args)
			if spec == nil {
				specs = nil
				break
			}
			specs = append(specs, spec)
		}
		if specs == nil {
			continue
		}
		lc.specs = specs
		if total > 0 && total+len(specs) > most {
			// Left for the next turn, which comes at once: a turn's
			// group stays short, so the reads behind it wait less.
			lc.carried = true
			l.carry = append(l.carry, lc)
			l.carries.Add(1)
			continue
		}
		lc.grouped = true
		groups = append(groups, groupPart{c: c, cmds: lc.cmds, specs: specs})
		total += len(specs)
	}
	l.grouped += total
	if total < 2 {
		for _, lc := range l.ready {
			lc.grouped = false
		}
	}
	// The other clients first: a read that arrives in the same turn as a
	// large group of writes does not wait for the group's commit. The
	// clients of a turn are concurrent, so any order is one Redis could
	// have served them in.
	for _, lc := range l.ready {
		if !lc.grouped && !lc.carried && !lc.gone {
			l.finish(lc)
		}
	}
	if total >= 2 {
		s.runGroups(groups)
		for _, lc := range l.ready {
			if lc.grouped {
				l.finish(lc)
			}
		}
	}
	clear(groups)
	l.groups = groups[:0]
	clear(l.ready)
	l.ready = append(l.ready[:0], l.carry...)
	for _, lc := range l.carry {
		lc.carried = false
	}
	clear(l.carry)
	l.carry = l.carry[:0]
}

// groupMax bounds the writes of one turn's group (a client's whole
// share, which may be more, always goes in): a read behind a group waits
// for all of it, and a larger bound lengthened the tail of reads under
// writes (bench/bigbench) without making pipelined writes faster. With
// appendfsync always each group is a sync, which 128 would make many more
// of, and pipelined writes slower, so the bound is then groupMaxSynced: a
// read waits for the sync anyway. The measurements: bench/results/
// HISTORY.md, "Figures that stood in code comments".
const (
	groupMax       = 128
	groupMaxSynced = 1024
)

// finish serves the client's commands of this turn (a grouped client's
// already ran) and writes its replies.
func (l *eventLoop) finish(lc *loopConn) {
	c := lc.c
	lc.queued = false
	if lc.grouped {
		c.flushTo(lc)
		if c.quitting {
			lc.closing = true
		}
	} else {
		cmds := lc.cmds
		for len(cmds) > 0 && !lc.closing && lc.left == nil && c.pending == nil {
			lc.pipe = cmds[1:]
			l.s.serveRESP(lc, cmds[0])
			cmds = lc.pipe
		}
		lc.pipe = nil
		if c.pending != nil && lc.left == nil {
			l.park(lc, c, cmds)
		}
	}
	clear(lc.cmds)
	lc.cmds = lc.cmds[:0]
	if lc.left != nil {
		return // a goroutine serves it now
	}
	if pe := lc.perr; pe != nil && !lc.closing && !lc.parked {
		var p *protoError
		if errors.As(pe, &p) {
			c.w.Error(errProtocol(p))
			c.flushTo(lc)
		}
		lc.closing = true
	}
	if !lc.parked {
		lc.perr = nil // a parked client's error is answered after its held commands
	}
	lc.g.compact()
	l.write(lc)
}

// park keeps a client whose command blocked (its pendingBlock) until the
// command is served: rest are the commands behind it, run afterwards.
func (l *eventLoop) park(lc *loopConn, c *client, rest []redcon.Command) {
	p := c.pending
	// p.held is the client's own copy (block): rest, which points into
	// lc.cmds, is copied behind it.
	p.held = append(p.held, rest...)
	lc.parked = true
	if !lc.blockedOut {
		l.p.Modify(lc.fd, l.interest(lc))
	}
	if !p.deadline.IsZero() {
		heap.Push(&l.timers, parkTimer{at: p.deadline, lc: lc, p: p})
	}
}

// unpark goes on with a client whose blocked command was just answered:
// the reply, then the commands held behind it.
func (l *eventLoop) unpark(lc *loopConn) {
	c := lc.c
	l.s.blocks.remove(c)
	held := c.pending.held
	c.pending = nil
	c.flushTo(lc)
	lc.parked = false
	lc.lastRead = time.Now() // the idle timeout counts from the reply, as in Redis
	if lc.timerIx >= 0 {
		heap.Remove(&l.timers, lc.timerIx)
	}
	if !lc.blockedOut {
		l.p.Modify(lc.fd, l.interest(lc))
	}
	lc.cmds = append(lc.cmds[:0], held...)
	if (len(lc.cmds) > 0 || lc.perr != nil) && !lc.queued {
		lc.queued = true
		l.ready = append(l.ready, lc)
		return
	}
	l.write(lc)
}

// serveWoken retries the blocked commands of the clients woken since the
// last call.
func (l *eventLoop) serveWoken() {
	l.wokenMu.Lock()
	woken := l.woken
	l.woken = l.wokenSpare[:0]
	for _, lc := range woken {
		lc.wokenQueued = false
	}
	l.wokenSent = false
	l.wokenMu.Unlock()
	clear(l.shared) // the last pass's replies: writes ran since
	for _, lc := range woken {
		if lc.parked && !lc.gone {
			l.retryParked(lc)
		}
	}
	clear(woken)
	l.wokenSpare = woken[:0]
}

// retryParked serves a parked client's command if CLIENT UNBLOCK asked,
// or if a key that woke it now has what it waits for.
func (l *eventLoop) retryParked(lc *loopConn) {
	c := lc.c
	p := c.pending
	select {
	case u := <-c.unblockCh:
		if u.answer(&c.w, p.req) {
			// Disconnected after the reply: what it sent behind the
			// blocked command is not run.
			p.held, lc.perr = nil, nil
			lc.closing = true
		}
		l.unpark(lc)
		return
	default:
	}
	p.ctx.w = &c.w
	p.ctx.woken = l.s.blocks.takeWoken(c)
	if len(p.ctx.woken) == 0 {
		return // already looked at by an earlier retry
	}
	// Readers blocked alike and woken by the same commit get the same
	// reply: one read serves them all (1,000 readers of one stream,
	// bench/wakebench). Nothing the pass runs in between changes a
	// stream's entries: the other retries read, or deliver to a group.
	var key string
	if p.req.share != "" {
		key = sharedKey(p.req.share, p.ctx.woken)
		if reply, ok := l.shared[key]; ok {
			c.w.buf = append(c.w.buf, reply...)
			l.unpark(lc)
			return
		}
	}
	mark, errs := len(c.w.buf), c.w.errs
	if l.s.retryBlocked(&p.ctx, p.req) {
		if key != "" && c.w.errs == errs {
			if l.shared == nil {
				l.shared = make(map[string][]byte)
			}
			l.shared[key] = append([]byte(nil), c.w.buf[mark:]...)
		}
		l.unpark(lc)
	}
}

// sharedKey is share with the woken keys, in order: the reply is the
// first of them that has entries.
func sharedKey(share string, woken [][]byte) string {
	b := append(make([]byte, 0, len(share)+16*len(woken)), share...)
	for _, k := range woken {
		b = appendLenKey(append(b, '|'), k)
	}
	return string(b)
}

// expireParked answers the blocked commands whose timeout passed.
func (l *eventLoop) expireParked(now time.Time) {
	for len(l.timers) > 0 && !l.timers[0].at.After(now) {
		t := l.timers[0]
		heap.Pop(&l.timers)
		c := t.lc.c
		if t.lc.gone || !t.lc.parked || c.pending != t.p {
			continue
		}
		t.p.req.onTimeout(&c.w)
		l.unpark(t.lc)
	}
}

// interest is what the loop watches a client's socket for.
func (l *eventLoop) interest(lc *loopConn) poll.Interest {
	switch {
	case lc.blockedOut:
		return poll.Writable
	case lc.parked:
		return poll.HangUp
	}
	return poll.Readable
}

// parkTimer is the deadline of a parked client's blocked command.
type parkTimer struct {
	at time.Time
	lc *loopConn
	p  *pendingBlock
}

// parkTimers is a heap of deadlines, earliest first; each client knows
// its place (loopConn.timerIx), so that an answered command's deadline
// goes at once.
type parkTimers []parkTimer

func (h parkTimers) Len() int           { return len(h) }
func (h parkTimers) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h parkTimers) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].lc.timerIx, h[j].lc.timerIx = i, j
}

func (h *parkTimers) Push(x any) {
	t := x.(parkTimer)
	t.lc.timerIx = len(*h)
	*h = append(*h, t)
}

func (h *parkTimers) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = parkTimer{}
	*h = old[:len(old)-1]
	t.lc.timerIx = -1
	return t
}

// write sends the client's replies. What the socket does not take waits
// until it is writable; meanwhile the client's requests are not read, as a
// blocking write would not read them either.
func (l *eventLoop) write(lc *loopConn) {
	if !l.hold(lc) {
		l.send(lc)
	}
}

// send writes what write did not hold.
func (l *eventLoop) send(lc *loopConn) {
	// Written from a copy of the slice, so that once all is written the
	// buffer is reused from its start (lc.out[n:] would shed what was
	// written from its capacity, and the next turn's replies would need
	// a new one).
	rest := lc.out
	for len(rest) > 0 {
		n, err := l.p.Write(lc.fd, rest)
		if err == poll.ErrWouldBlock {
			lc.out = rest
			if !lc.blockedOut {
				lc.blockedOut = true
				l.p.Modify(lc.fd, poll.Writable)
			}
			return
		}
		if err != nil || n <= 0 {
			l.drop(lc)
			return
		}
		rest = rest[n:]
	}
	if cap(lc.out) > loopKeepOut {
		lc.out = nil // an idle client keeps no large buffer
	} else {
		lc.out = lc.out[:0]
	}
	if lc.closing {
		l.drop(lc)
		return
	}
	if lc.blockedOut {
		lc.blockedOut = false
		l.p.Modify(lc.fd, l.interest(lc))
	}
}

// hold reports whether lc's replies must wait for a log sync, and holds
// them if so. With appendfsync always a reply leaves only once every
// write applied before it is durable, as Redis writes its replies after
// the AOF's fsync; the loop does not wait for the sync itself (the
// writes were applied with UpdateApplied) but goes on with the next
// turn while it runs, and releases the replies when it ends.
func (l *eventLoop) hold(lc *loopConn) bool {
	eng := l.s.engine
	if lc.held {
		lc.heldAt = eng.Applied()
		return true
	}
	if len(lc.out) == 0 && !lc.closing || !eng.RepliesWaitForSync() {
		return false
	}
	if eng.Failed() != nil {
		// No sync will cover anything again: the writes are refused
		// (MISCONF), and what is read goes out as Redis's reads of
		// writes not yet synced do. The replies held when the sync
		// failed were dropped with their clients (released).
		return false
	}
	at := eng.Applied()
	if at <= eng.Durable() {
		return false // a sync covered it, the loop's or another's
	}
	lc.held, lc.heldAt = true, at
	l.held = append(l.held, lc)
	return true
}

// syncHeld starts a log sync for the held replies, unless one runs.
func (l *eventLoop) syncHeld(wait bool) {
	if l.syncing || len(l.held) == 0 {
		return
	}
	l.syncing = true
	// The sync answers the writes committed since the last one started
	// (INFO's eddy_sync_writers), not the clients whose replies it holds.
	writes := l.s.engine.CommitStats().Writes
	writers := int(writes - l.syncedWrites)
	l.syncedWrites = writes
	if wait {
		l.released(syncUnlocked(l.s.engine, writers))
		return
	}
	go func(eng *stream.Engine) { l.synced <- eng.SyncApplied(writers) }(l.s.engine)
}

// syncUnlocked runs a log sync on the loop's goroutine, unlocked from its
// thread while it waits. The store's journal writes and syncs on the
// calling goroutine (storage/journal.go), keeping the slot through a raw
// fdatasync (storage/logfs_linux.go); but the sync parks the goroutine
// when another is in flight (the everysec loop's, a big group's run on
// its own goroutine), and a locked goroutine that parks gives its
// scheduler slot to another thread, and when woken must be handed back
// to its own: two thread switches, each a futex wake-up that waits for a
// CPU the benchmark client shares. With appendfsync always and small
// groups the loop syncs every turn, so this is on every reply's path.
func syncUnlocked(eng *stream.Engine, writers int) error {
	runtime.UnlockOSThread()
	defer runtime.LockOSThread()
	return eng.SyncApplied(writers)
}

// waitUnlocked waits, unlocked from the loop's thread, for the sync in
// flight to end or for syncWaitMax to pass, and returns whether the sync
// ended, and its result. The loop waits for a background sync
// (syncHeld) only when nothing is ready to read: blocked in the poller
// it would keep its scheduler slot (a blocking system call lends the slot
// only once the runtime's monitor takes it back), while the sync's
// goroutine, readied by this goroutine, waits in that slot's queue; with
// the other slot busy with a compaction, a flush or the collector, it
// waited there for many milliseconds (runtime/trace; bench/results/
// HISTORY.md, "Figures that stood in code comments").
// Parked unlocked, the loop leaves the slot, and its thread, to them,
// and is woken on it when the sync ends. The bound keeps a slow sync
// from stopping the loop: a client that sends meanwhile is read within
// syncWaitMax, and its write applied while the sync goes on.
func (l *eventLoop) waitUnlocked() (bool, error) {
	runtime.UnlockOSThread()
	defer runtime.LockOSThread()
	if l.syncWait == nil {
		l.syncWait = time.NewTimer(syncWaitMax)
	} else {
		l.syncWait.Reset(syncWaitMax)
	}
	select {
	case err := <-l.synced:
		l.syncWait.Stop()
		return true, err
	case <-l.syncWait.C:
		return false, nil
	}
}

// syncWaitMax bounds waitUnlocked: longer than most journal syncs, so
// that the loop seldom wakes before its sync ends; bounds of half and
// more than twice as much did as well (bench/results/HISTORY.md, "Figures
// that stood in code comments").
const syncWaitMax = 2 * time.Millisecond

// release writes the replies the sync in flight covered, if it has
// finished, and starts the next sync for those still held.
func (l *eventLoop) release() {
	if !l.syncing {
		return
	}
	select {
	case err := <-l.synced:
		l.syncDone(err)
	default:
	}
}

// syncDone writes the replies the finished sync covered and starts the
// next sync for those still held.
func (l *eventLoop) syncDone(err error) {
	l.released(err)
	l.syncHeld(false)
}

// settle waits for the sync in flight, if any, and writes the replies it
// covered: the store closes once run returns.
func (l *eventLoop) settle() {
	if l.syncing {
		l.released(<-l.synced)
	}
}

// released writes the replies a finished sync covered.
func (l *eventLoop) released(err error) {
	l.syncing = false
	if err != nil {
		// Nothing held may be acknowledged: as Redis exits when an
		// fsync fails with appendfsync always, the clients lose their
		// connections rather than get replies for writes that may be
		// lost.
		l.s.logger.Error("event loop: log sync failed", "err", err)
		for _, lc := range l.held {
			if lc.held {
				lc.held = false
				l.drop(lc)
			}
		}
		clear(l.held)
		l.held = l.held[:0]
		return
	}
	durable := l.s.engine.Durable()
	keep := l.held[:0]
	for _, lc := range l.held {
		switch {
		case !lc.held: // dropped meanwhile
		case lc.heldAt > durable:
			keep = append(keep, lc)
		default:
			lc.held = false
			if lc.mute {
				lc.mute = false
				l.p.Modify(lc.fd, l.interest(lc))
			}
			l.send(lc)
		}
	}
	clear(l.held[len(keep):])
	l.held = keep
}

// sweepIdle disconnects the clients idle longer than the timeout
// directive. Blocked clients never time out, as in Redis; replicas left
// the loop.
func (l *eventLoop) sweepIdle(now time.Time) {
	t := l.s.idleTimeout()
	if t <= 0 {
		return
	}
	for _, lc := range l.conns {
		if !lc.parked && now.Sub(lc.lastRead) > t {
			l.drop(lc)
		}
	}
}

// drop closes a client's socket and forgets the client.
func (l *eventLoop) drop(lc *loopConn) {
	lc.mu.Lock()
	if !lc.gone {
		lc.gone = true
		l.p.Close(lc.fd) // leaves the poller's set too: nothing else holds the socket
	}
	lc.mu.Unlock()
	delete(l.conns, lc.fd)
	lc.held = false // release skips it
	if lc.timerIx >= 0 {
		heap.Remove(&l.timers, lc.timerIx)
	}
	if lc.c != nil {
		l.s.dropClient(lc.c)
	}
}

// loopConn is a client in the event loop. Its replies gather in out
// until the end of the turn.
type loopConn struct {
	l     *eventLoop
	fd    int
	addr  string
	laddr string
	g     *guardConn // frames the input
	c     *client    // set by Server.accept

	out        []byte           // replies not yet written
	cmds       []redcon.Command // parsed this turn
	specs      []*commandSpec   // their specs, when grouped
	pipe       []redcon.Command // the commands behind the one serveRESP runs
	perr       error            // the protocol error after cmds, if any
	grouped    bool             // cmds ran in this turn's group
	queued     bool             // in ready
	carried    bool             // left for the next turn's group
	closing    bool             // Close was called: write out, then drop
	blockedOut bool             // out waits for the socket to be writable
	lastRead   time.Time
	parked     bool   // its command is blocked (park)
	held       bool   // out waits for a log sync (hold)
	heldAt     uint64 // the applied count that sync must cover
	mute       bool   // held with input waiting: its socket is not watched until released
	timerIx    int    // its place in eventLoop.timers; -1: none
	// wokenQueued is set while it is in eventLoop.woken; guarded by
	// eventLoop.wokenMu.
	wokenQueued bool

	mu   sync.Mutex // orders kill against the loop closing or handing over fd
	gone bool       // guarded by mu: fd is closed, or handed over
	left net.Conn   // guarded by mu (written by the loop only): the socket, once it left the loop
}

// Close asks for the connection to close once the replies are written.
func (lc *loopConn) Close() { lc.closing = true }

// WriteRaw adds to the replies written at the end of the turn.
func (lc *loopConn) WriteRaw(data []byte) { lc.out = append(lc.out, data...) }

// PeekPipeline returns the commands behind the one running.
func (lc *loopConn) PeekPipeline() []redcon.Command { return lc.pipe }

// ReadPipeline takes the commands behind the one running: the caller
// serves them.
func (lc *loopConn) ReadPipeline() []redcon.Command {
	p := lc.pipe
	lc.pipe = nil
	return p
}

// kill disconnects the client from any goroutine. While the loop owns the
// socket a shutdown makes its next read fail, and the loop drops it.
func (lc *loopConn) kill() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	switch {
	case lc.left != nil:
		lc.left.Close()
	case !lc.gone:
		lc.l.p.Shutdown(lc.fd)
	}
}

// detach takes the client out of the loop, for good (a replication link):
// the replies not yet written are written, and the socket is returned as
// a net.Conn. The replica sends nothing after PSYNC until it has the
// answer, so no request of it is framed or waits behind the running one.
// It runs on the loop's thread.
func (lc *loopConn) detach() net.Conn {
	l := lc.l
	lc.mu.Lock()
	defer lc.mu.Unlock()
	delete(l.conns, lc.fd)
	nc := l.p.Detach(lc.fd)
	lc.gone = true
	lc.pipe = nil
	if len(lc.out) > 0 {
		nc.SetWriteDeadline(time.Now().Add(detachWriteMax))
		nc.Write(lc.out)
		nc.SetWriteDeadline(time.Time{})
		lc.out = nil
	}
	lc.left = nc
	c := lc.c
	c.iters = nil
	c.loopNotify.Store(nil)
	c.mu.Lock()
	c.fd = connFD(nc) // the dup's, for CLIENT LIST
	c.mu.Unlock()
	return nc
}

// detachWriteMax bounds the write of a leaving client's last replies, on
// the loop's thread: a peer that does not read them is not waited for.
const detachWriteMax = time.Second
