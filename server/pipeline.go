package server

import (
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/tidwall/redcon"
)

// Pipelines. redcon hands serveRESP one command at a time, but it has
// parsed every command that arrived in the same read. When the first two
// are writes that may share a transaction, serveRESP takes the whole
// pipeline and serves it here: each run of consecutive such writes shares
// one engine.Update (one batch, one sync) instead of one each.
//
// A group behaves exactly as its commands run one by one: each gets its
// own reply, OnCommit (watchers, blocked readers) runs once after the
// group. If any command of the group fails, the group's transaction is
// dropped whole, its replies erased, and its commands run again one by
// one through dispatch, so a failing command leaves no writes and the
// others keep theirs, as in sequential execution.

// groupable returns the spec of args when it may join a group: an
// authenticated client outside MULTI, a known write command with the
// right arity that cannot block and needs no special dispatch. Anything
// else (MULTI, EXEC, WATCH, SELECT, AUTH, reads, a blocking XREADGROUP)
// ends a group.
func (s *Server) groupable(c *client, args [][]byte) *commandSpec {
	// A replica's writes go one by one through dispatch, which refuses
	// them (-READONLY).
	if len(args) == 0 || c.multi != nil || !c.isAuthed() || s.engine.Follower() {
		return nil
	}
	spec, _ := s.lookup(args)
	const refuse = flagBlocking | flagNoKeyspace | flagNoQueue | flagAnswerFirst | flagExecLike
	if spec == nil || spec.flags&flagWrite == 0 || spec.flags&refuse != 0 || !spec.arityOK(len(args)) {
		return nil
	}
	return spec
}

// startsGroup reports whether cmd and the first command redcon has
// buffered behind it can share a transaction.
func (s *Server) startsGroup(c *client, conn redcon.Conn, cmd redcon.Command) bool {
	next := conn.PeekPipeline()
	return len(next) > 0 && s.groupable(c, next[0].Args) != nil && s.groupable(c, cmd.Args) != nil
}

// servePipeline serves first and the rest of the pipeline redcon had
// buffered, grouping consecutive writes. It leaves the replies in
// redcon's writer (redcon flushes them), closes the connection after
// QUIT, and carries on as serveDetached if a command blocks.
func (s *Server) servePipeline(c *client, conn redcon.Conn, first redcon.Command, rest []redcon.Command) {
	cmds := append(append(c.pipe[:0], first), rest...)
	defer func() {
		clear(cmds)
		c.pipe = cmds[:0]
	}()
	for i := 0; i < len(cmds); {
		specs := c.groupSpecs[:0]
		for j := i; j < len(cmds); j++ {
			spec := s.groupable(c, cmds[j].Args)
			if spec == nil {
				break
			}
			specs = append(specs, spec)
		}
		c.groupSpecs = specs[:0]
		if len(specs) >= 2 {
			s.runGroup(c, cmds[i:i+len(specs)], specs)
			i += len(specs)
			if c.quitting {
				break
			}
			continue
		}
		// Commands after one that blocks wait in the detached queue.
		c.backlog = cmds[i+1:]
		s.dispatch(c, cmds[i].Args)
		c.backlog = nil
		i++
		if c.quitting || c.detached != nil {
			break
		}
	}
	c.flushTo(conn)
	switch {
	case c.quitting:
		conn.Close()
	case c.detached != nil:
		s.serveDetached(c)
	}
}

// runGroup runs writes (two or more, with their specs) in one
// transaction; see the top of this file.
func (s *Server) runGroup(c *client, cmds []redcon.Command, specs []*commandSpec) {
	s.gate.RLock()
	if s.stopped {
		s.gate.RUnlock()
		c.quitting = true
		return
	}
	w := &c.w
	mark, errsBefore, errStats := len(w.buf), w.errs, w.stats
	// A failed attempt is replayed: its error must not be counted twice.
	w.stats = nil
	start := time.Now()
	s.commitMu.RLock()
	err := s.engine.Update(func(tx *stream.Tx) error {
		ctx := &c.cmd
		defer func() { *ctx = cmdContext{} }()
		for i, cmd := range cmds {
			*ctx = cmdContext{c: c, args: cmd.Args, w: w, db: c.db, tx: tx}
			specs[i].handler(ctx)
			if ctx.failed || ctx.block != nil || w.errs > errsBefore {
				return errRollback
			}
		}
		return nil
	})
	s.commitMu.RUnlock()
	w.stats = errStats
	if err != nil {
		// Nothing was written: replay one by one for the exact replies.
		w.buf, w.errs = w.buf[:mark], errsBefore
		s.gate.RUnlock()
		for _, cmd := range cmds {
			s.dispatch(c, cmd.Args)
			if c.quitting {
				return
			}
		}
		return
	}
	// The group's time is shared out evenly in commandstats.
	n := int64(len(cmds))
	usec := time.Since(start).Microseconds()
	for i, spec := range specs {
		spec.stats.calls.Add(1)
		share := usec / n
		if int64(i) < usec%n {
			share++
		}
		spec.stats.usec.Add(share)
	}
	s.stats.commands.Add(n)
	s.stats.writeGroups.Add(1)
	c.noteCommand(specs[len(specs)-1].full, start)
	s.gate.RUnlock()
}
