package server

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// errRollback makes Update drop the writes of a command that replied
// with an error.
var errRollback = errors.New("server: command failed, writes dropped")

// commandTable is the one table of commands.
func commandTable() []*commandSpec {
	var t []*commandSpec
	t = append(t, connectionCommands()...)
	t = append(t, keyspaceCommands()...)
	t = append(t, stringCommands()...)
	t = append(t, adminCommands()...)
	t = append(t, transactionCommands()...)
	t = append(t, streamCommands()...)
	t = append(t, replicationCommands()...)
	return t
}

// cmdStats are the INFO commandstats counters of one command.
type cmdStats struct {
	calls, usec, rejected, failed atomic.Int64
}

// buildTable indexes the table, links subcommands to their parent and
// gives every command Redis has its documentation from command_meta.go.
func (s *Server) buildTable(cmds []*commandSpec) {
	s.table = make(map[string]*commandSpec, 2*len(cmds))
	s.cmdStats = make(map[*commandSpec]*cmdStats)
	s.commands = cmds
	for _, c := range cmds {
		s.table[c.name] = c
		// Clients send names in lower case (go-redis) or upper case
		// (redis-benchmark, most scripts): both are found in one probe;
		// any other spelling is folded to lower case first.
		s.table[strings.ToUpper(c.name)] = c
		c.stats = new(cmdStats)
		c.full = c.name
		s.cmdStats[c] = c.stats
		if m, ok := redisCommandMeta[c.name]; ok {
			c.applyMeta(m)
		}
		for _, sub := range c.subcommands {
			sub.parent = c
			sub.stats = new(cmdStats)
			sub.full = c.name + "|" + sub.name
			s.cmdStats[sub] = sub.stats
			if m, ok := redisCommandMeta[sub.full]; ok {
				sub.applyMeta(m)
			}
		}
	}
}

// fullName is the name commandstats and errors use: "xinfo|stream".
func (spec *commandSpec) fullName() string {
	if spec.full != "" {
		return spec.full
	}
	if spec.parent != nil {
		return spec.parent.name + "|" + spec.name
	}
	return spec.name
}

// maxCommandName bounds the names lookup folds on the stack; no command
// name is longer.
const maxCommandName = 32

// lookup finds the command for args the way Redis's lookupCommand does: a
// container command with no second argument is itself. It allocates
// nothing: the name is folded to lower case on the stack.
func (s *Server) lookup(args [][]byte) (spec, parent *commandSpec) {
	spec = s.table[string(args[0])]
	if spec == nil && len(args[0]) <= maxCommandName {
		var buf [maxCommandName]byte
		name := buf[:len(args[0])]
		for i, ch := range args[0] {
			name[i] = lowerByte(ch)
		}
		spec = s.table[string(name)]
	}
	if spec == nil || len(spec.subcommands) == 0 || len(args) < 2 {
		return spec, nil
	}
	for _, sc := range spec.subcommands {
		if argIs(args[1], sc.name) {
			return sc, spec
		}
	}
	return nil, spec
}

// lastCommand is the command a client sent last, with the bytes of its
// name: clients send the same command over and over, and comparing a
// few bytes costs less than a probe of the table, which the rest of a
// turn's work keeps out of the CPU's caches; under pipelined XADDs the
// probes were a visible share of the event loop's time
// (bench/results/HISTORY.md, "Figures that stood in code comments").
type lastCommand struct {
	name [16]byte
	n    int
	spec *commandSpec
}

// lookupFor is lookup through c's last command. Commands with
// subcommands are not kept: their second argument picks the spec.
func (s *Server) lookupFor(c *client, args [][]byte) (spec, parent *commandSpec) {
	last := &c.lastCommand
	if name := args[0]; len(name) == last.n && last.spec != nil && string(name) == string(last.name[:last.n]) {
		return last.spec, nil
	}
	spec, parent = s.lookup(args)
	if spec != nil && parent == nil && len(spec.subcommands) == 0 && len(args[0]) <= len(last.name) {
		last.n = copy(last.name[:], args[0])
		last.spec = spec
	}
	return spec, parent
}

// arityOK applies Redis's arity rule.
func (spec *commandSpec) arityOK(n int) bool {
	if spec.arity >= 0 {
		return n == spec.arity
	}
	return n >= -spec.arity
}

// reject refuses a command before it runs: the error reply, the
// rejected_calls counter, and a queued transaction marked to abort.
func (s *Server) reject(c *client, spec *commandSpec, text string) {
	if c.multi != nil {
		c.multi.aborted = true
	}
	if spec != nil {
		spec.stats.rejected.Add(1)
	}
	c.w.Error(text)
}

// dispatch runs one command from a client: lookup, arity, auth,
// transaction queueing, then the call.
func (s *Server) dispatch(c *client, args [][]byte) {
	if len(args) == 0 {
		return
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.stopped {
		c.quitting = true
		return
	}
	spec, parent := s.lookupFor(c, args)
	now := time.Now()
	switch {
	case spec == nil && parent != nil:
		c.noteCommand(parent.name, now)
		s.reject(c, nil, errUnknownSubcommand(parent.name, args[1]))
		return
	case spec == nil:
		c.noteCommand("NULL", now)
		s.reject(c, nil, errUnknownCommand(args))
		return
	}
	c.noteCommand(spec.full, now)
	if spec.flags&flagAnswerFirst != 0 {
		// Redis 7.0 answers QUIT before any check.
		spec.handler(&cmdContext{c: c, args: args, w: &c.w})
		return
	}
	if !spec.arityOK(len(args)) {
		text := errWrongArity(spec.full)
		if spec.flags&flagExecLike != 0 {
			// EXEC refused: the transaction goes with it.
			c.multi = nil
			c.setMultiCount(-1)
			s.watch.unwatchAll(c)
			spec.stats.rejected.Add(1)
			c.w.Error(errExecAbortedBecause(text))
			return
		}
		s.reject(c, spec, text)
		return
	}
	if !c.isAuthed() && spec.flags&flagNoAuth == 0 {
		s.reject(c, spec, errNoAuth)
		return
	}
	if spec.flags&flagWrite != 0 && s.engine.Follower() {
		s.reject(c, spec, errReadOnlyReplica)
		return
	}
	if spec.flags&flagNoKeyspace == 0 && s.engine.Follower() {
		// From the loading check to the end: see replHub.loadMu.
		s.repl.loadMu.RLock()
		defer s.repl.loadMu.RUnlock()
	}
	if s.repl.loading.Load() && loadingRefuses(spec) {
		s.reject(c, spec, errLoading)
		return
	}
	if c.multi != nil && spec.flags&flagNoQueue == 0 {
		if spec.flags&flagNoMulti != 0 {
			s.reject(c, spec, errNotInMulti)
			return
		}
		c.multi.cmds = append(c.multi.cmds, queuedCmd{spec: spec, args: args})
		c.setMultiCount(len(c.multi.cmds))
		c.w.Simple("QUEUED")
		return
	}
	// The client's own context, reused: a command costs no allocation
	// for it (a blocked command keeps a copy).
	ctx := &c.cmd
	*ctx = cmdContext{c: c, args: args, w: &c.w, db: c.db}
	s.call(ctx, spec, nil, now)
	if ctx.block != nil {
		s.block(ctx)
	}
	*ctx = cmdContext{}
}

// loadingRefuses reports whether a replica loading a full sync answers
// spec -LOADING: as in Redis, every command without the loading flag.
// Of those with it, the ones that need the keyspace, which the load
// holds locked, are refused too (WATCH), unless they can run without it
// (flagLoadingBare: INFO).
func loadingRefuses(spec *commandSpec) bool {
	return spec.flags&flagLoading == 0 || spec.flags&(flagNoKeyspace|flagLoadingBare) == 0
}

// call runs a command and counts it. tx is the transaction to run in
// (inside EXEC); nil runs the command in its own View or Update, or
// without one for flagNoKeyspace commands. start is when the command
// began, for commandstats.
func (s *Server) call(ctx *cmdContext, spec *commandSpec, tx *stream.Tx, start time.Time) {
	w := ctx.w
	mark, errsBefore := len(w.buf), w.errs
	switch {
	case tx != nil:
		if spec.flags&flagNoKeyspace == 0 {
			ctx.tx = tx
		}
		spec.handler(ctx)
	case spec.flags&flagNoKeyspace != 0:
		spec.handler(ctx)
	case spec.flags&flagWrite != 0:
		s.commitMu.RLock()
		err := s.update(ctx.c, ctx.c.writeFunc(ctx, spec, errsBefore))
		s.commitMu.RUnlock()
		ctx.tx = nil
		if err != nil && !errors.Is(err, errRollback) {
			s.replaceReply(ctx, mark, err)
		}
	case spec.flags&flagLoadingBare != 0 && s.repl.loading.Load():
		spec.handler(ctx)
	default:
		err := s.engine.ViewWith(ctx.c.iters, func(t *stream.Tx) error {
			ctx.tx = t
			spec.handler(ctx)
			return nil
		})
		ctx.tx = nil
		if err != nil {
			s.replaceReply(ctx, mark, err)
		}
	}
	st := spec.stats
	st.calls.Add(1)
	st.usec.Add(time.Since(start).Microseconds())
	if w.errs > errsBefore {
		st.failed.Add(1)
	}
	s.stats.commands.Add(1)
}

// writeCall is the write command call hands to Engine.Update.
type writeCall struct {
	ctx        *cmdContext
	spec       *commandSpec
	errsBefore int
}

// writeFunc returns the function call hands to Engine.Update to run a
// write command: the client's one bound method, so that a write costs no
// closure allocation. Update returns before the next command of the
// client starts, so one pending call per client is all there is.
func (c *client) writeFunc(ctx *cmdContext, spec *commandSpec, errsBefore int) func(*stream.Tx) error {
	if c.writeFn == nil {
		c.writeFn = c.runWrite
	}
	c.write = writeCall{ctx: ctx, spec: spec, errsBefore: errsBefore}
	return c.writeFn
}

// runWrite runs the pending write command in t; an error reply drops its
// writes.
func (c *client) runWrite(t *stream.Tx) error {
	wc := c.write
	c.write = writeCall{}
	wc.ctx.tx = t
	wc.spec.handler(wc.ctx)
	if wc.ctx.failed || wc.ctx.w.errs > wc.errsBefore {
		return errRollback
	}
	return nil
}

// replaceReply drops what a handler wrote and replies with err instead,
// so a failed commit never leaves a half or a false reply.
func (s *Server) replaceReply(ctx *cmdContext, mark int, err error) {
	s.logger.Warn("command failed", "cmd", string(ctx.args[0]), "err", err)
	ctx.w.buf = ctx.w.buf[:mark]
	ctx.block = nil
	ctx.w.Error(errorText(err))
}

// fail replies with the wire text of an engine error and marks the
// command failed.
func (ctx *cmdContext) fail(err error) {
	ctx.failed = true
	ctx.w.Error(errorText(err))
}

// serverStats are the server-wide INFO counters.
type serverStats struct {
	commands      atomic.Int64
	connsReceived atomic.Int64
	rejectedConns atomic.Int64
	expiredKeys   atomic.Int64
	hits, misses  atomic.Int64
	netInput      atomic.Int64
	netOutput     atomic.Int64
	// writeGroups counts the pipelined write groups that shared one
	// transaction (pipeline.go).
	writeGroups atomic.Int64

	mu     sync.Mutex
	errors map[string]int64 // guarded by mu: error code -> count
	total  int64            // guarded by mu: all error replies
}

func (st *serverStats) init() { st.errors = make(map[string]int64) }

// countError counts an error reply under its code, the first word.
func (st *serverStats) countError(text string) {
	code := text
	if i := strings.IndexByte(code, ' '); i >= 0 {
		code = code[:i]
	}
	st.mu.Lock()
	if st.errors == nil {
		st.errors = make(map[string]int64)
	}
	if _, ok := st.errors[code]; ok || len(st.errors) < 128 {
		st.errors[code]++
	}
	st.total++
	st.mu.Unlock()
}

// reset clears the counters CONFIG RESETSTAT clears.
func (st *serverStats) reset() {
	st.commands.Store(0)
	st.connsReceived.Store(0)
	st.rejectedConns.Store(0)
	st.expiredKeys.Store(0)
	st.hits.Store(0)
	st.misses.Store(0)
	st.netInput.Store(0)
	st.netOutput.Store(0)
	st.mu.Lock()
	st.errors = make(map[string]int64)
	st.total = 0
	st.mu.Unlock()
}

// syncAheadMin is the smallest group of writes whose sync the event
// loop leaves running while it goes on (appendfsync always). Smaller
// groups, each applied and synced alone, cost more than the wait they
// save: 16 and 24 made unpipelined XADD slower than 64
// (bench/results/HISTORY.md, "The network path: one event loop" and
// "Figures that stood in code comments").
const syncAheadMin = 64

// update commits fn's writes for c. A client of the event loop is
// answered as soon as they are applied: with appendfsync always the loop
// holds its replies until a sync covers them (eventLoop.hold), so the
// loop goes on serving while the sync runs.
func (s *Server) update(c *client, fn func(tx *stream.Tx) error) error {
	if c.inLoop() {
		return s.engine.UpdateApplied(fn)
	}
	return s.engine.Update(fn)
}
