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
// one engine.Update (one batch, one sync) instead of one each. In the
// event loop it is Engine.UpdateApplied, the loop making the writes
// durable before their replies leave (loop.go).
//
// A group behaves exactly as its commands run one by one: each gets its
// own reply, OnCommit (watchers, blocked readers) runs once after the
// group. If any command of the group fails, the group's transaction is
// dropped whole, its replies erased, and its commands run again one by
// one through dispatch, so a failing command leaves no writes and the
// others keep theirs, as in sequential execution.

// groupable returns the spec of args when it may join a group: an
// authenticated client outside MULTI, a known write command with the
// right arity that cannot block (XREADGROUP only without BLOCK) and needs
// no special dispatch. Anything else (MULTI, EXEC, WATCH, SELECT, AUTH,
// reads, XREADGROUP … BLOCK) ends a group.
func (s *Server) groupable(c *client, args [][]byte) *commandSpec {
	// A replica's writes go one by one through dispatch, which refuses
	// them (-READONLY).
	if len(args) == 0 || c.multi != nil || !c.isAuthed() || s.engine.Follower() {
		return nil
	}
	spec, _ := s.lookupFor(c, args)
	const refuse = flagNoKeyspace | flagNoQueue | flagAnswerFirst | flagExecLike
	if spec == nil || spec.flags&flagWrite == 0 || spec.flags&refuse != 0 || !spec.arityOK(len(args)) {
		return nil
	}
	if spec.flags&flagBlocking != 0 && mayBlock(args) {
		return nil
	}
	return spec
}

// mayBlock reports whether a blocking write (XREADGROUP, the only one)
// asks to block. Without BLOCK it never does, and it may join a group. A
// request that does not parse fails in its handler, so the group is
// replayed one by one and the error comes from there.
func mayBlock(args [][]byte) bool {
	o, errText := parseXReadOptions(args, true)
	return errText == "" && o.block
}

// startsGroup reports whether cmd and the first command redcon has
// buffered behind it can share a transaction.
func (s *Server) startsGroup(c *client, conn *loopConn, cmd redcon.Command) bool {
	next := conn.PeekPipeline()
	return len(next) > 0 && s.groupable(c, next[0].Args) != nil && s.groupable(c, cmd.Args) != nil
}

// servePipeline serves first and the rest of the pipeline the loop read
// with it, grouping consecutive writes. It leaves the replies in the
// connection (the loop writes them), closes the connection after QUIT,
// and stops at a command that blocks, which keeps the rest.
func (s *Server) servePipeline(c *client, conn *loopConn, first redcon.Command, rest []redcon.Command) {
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
		// Commands after one that blocks are held behind it.
		c.backlog = cmds[i+1:]
		s.dispatch(c, cmds[i].Args)
		c.backlog = nil
		i++
		if c.quitting || c.pending != nil {
			break // a blocked command keeps the rest (pendingBlock.held)
		}
	}
	c.flushTo(conn)
	if c.quitting {
		conn.Close()
	}
}

// runGroup runs writes (two or more, with their specs) in one
// transaction; see the top of this file.
func (s *Server) runGroup(c *client, cmds []redcon.Command, specs []*commandSpec) {
	c.part[0] = groupPart{c: c, cmds: cmds, specs: specs}
	s.runGroups(c.part[:])
	c.part[0] = groupPart{}
}

// replayParts runs the commands of a group one by one through dispatch.
func (s *Server) replayParts(parts []groupPart) {
	for _, p := range parts {
		for _, cmd := range p.cmds {
			s.dispatch(p.c, cmd.Args)
			if p.c.quitting {
				break
			}
		}
	}
}

// groupPart is one client's share of a group: its writes, in order, and
// their specs.
type groupPart struct {
	c     *client
	cmds  []redcon.Command
	specs []*commandSpec

	mark, errs int          // the client's reply buffer before the group
	stats      *serverStats // its error counters, off during the attempt
}

// runGroups runs the writes of one or more clients in one transaction:
// the event loop groups every client of a turn (loop.go). It is
// the clients' commands run one by one, client after client; if any of
// them fails, nothing is written and they are run so, through dispatch.
func (s *Server) runGroups(parts []groupPart) {
	s.gate.RLock()
	if s.stopped {
		s.gate.RUnlock()
		for i := range parts {
			parts[i].c.quitting = true
		}
		return
	}
	if s.engine.Follower() {
		// The server became a replica after the group was formed (a
		// REPLICAOF served earlier in the event loop's turn): dispatch
		// refuses each write.
		s.gate.RUnlock()
		s.replayParts(parts)
		return
	}
	for i := range parts {
		p := &parts[i]
		w := &p.c.w
		p.mark, p.errs, p.stats = len(w.buf), w.errs, w.stats
		// A failed attempt is replayed: its error must not be counted twice.
		w.stats = nil
	}
	start := time.Now()
	s.commitMu.RLock()
	err := s.update(parts[0].c, func(tx *stream.Tx) error {
		for i := range parts {
			p := &parts[i]
			c := p.c
			ctx := &c.cmd
			for j, cmd := range p.cmds {
				*ctx = cmdContext{c: c, args: cmd.Args, w: &c.w, db: c.db, tx: tx}
				p.specs[j].handler(ctx)
				failed := ctx.failed || ctx.block != nil || c.w.errs > p.errs
				*ctx = cmdContext{}
				if failed {
					return errRollback
				}
			}
		}
		return nil
	})
	s.commitMu.RUnlock()
	for i := range parts {
		parts[i].c.w.stats = parts[i].stats
	}
	if err != nil {
		// Nothing was written: replay one by one for the exact replies.
		for i := range parts {
			w := &parts[i].c.w
			w.buf, w.errs = w.buf[:parts[i].mark], parts[i].errs
		}
		s.gate.RUnlock()
		s.replayParts(parts)
		return
	}
	// The group's time is shared out evenly in commandstats.
	var n int64
	for _, p := range parts {
		n += int64(len(p.cmds))
	}
	usec := time.Since(start).Microseconds()
	var k int64
	for _, p := range parts {
		for _, spec := range p.specs {
			spec.stats.calls.Add(1)
			share := usec / n
			if k < usec%n {
				share++
			}
			k++
			spec.stats.usec.Add(share)
		}
		p.c.noteCommand(p.specs[len(p.specs)-1].full, start)
	}
	s.stats.commands.Add(n)
	s.stats.writeGroups.Add(1)
	s.gate.RUnlock()
}
