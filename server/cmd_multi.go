package server

import (
	"sync"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// transactionCommands are MULTI, EXEC and their relatives; their
// documentation comes from command_meta.go.
func transactionCommands() []*commandSpec {
	return []*commandSpec{
		{name: "multi", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoKeyspace | flagNoQueue | flagAllowBusy,
			handler: cmdMulti},
		{name: "exec", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagSkipSlowlog | flagNoKeyspace | flagNoQueue | flagExecLike,
			handler: cmdExec},
		{name: "discard", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoKeyspace | flagNoQueue | flagAllowBusy,
			handler: cmdDiscard},
		{name: "watch", arity: -2, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoQueue | flagAllowBusy,
			firstKey: 1, lastKey: -1, step: 1, handler: cmdWatch},
		{name: "unwatch", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoKeyspace | flagAllowBusy,
			handler: cmdUnwatch},
	}
}

func cmdMulti(ctx *cmdContext) {
	c := ctx.c
	if c.multi != nil {
		ctx.w.Error(errMultiNested)
		return
	}
	c.multi = &multiState{}
	c.setMultiCount(0)
	ctx.w.Simple("OK")
}

func cmdDiscard(ctx *cmdContext) {
	c := ctx.c
	if c.multi == nil {
		ctx.w.Error(errDiscardNoMulti)
		return
	}
	c.multi = nil
	c.setMultiCount(-1)
	c.s.watch.unwatchAll(c)
	ctx.w.Simple("OK")
}

func cmdUnwatch(ctx *cmdContext) {
	ctx.c.s.watch.unwatchAll(ctx.c)
	ctx.w.Simple("OK")
}

func cmdWatch(ctx *cmdContext) {
	c := ctx.c
	if c.multi != nil {
		ctx.w.Error(errWatchInMulti)
		return
	}
	for _, k := range ctx.args[1:] {
		if c.s.watch.has(c, ctx.db, k) {
			continue
		}
		n, err := ctx.tx.Exists(ctx.db, k)
		if err != nil {
			ctx.fail(err)
			return
		}
		c.s.watch.add(c, ctx.db, k, n)
	}
	ctx.w.Simple("OK")
}

// cmdExec runs the queued commands in one write transaction: one batch,
// one reply each, a failing command does not stop the others.
func cmdExec(ctx *cmdContext) {
	c, s := ctx.c, ctx.c.s
	m := c.multi
	if m == nil {
		ctx.w.Error(errExecNoMulti)
		return
	}
	c.multi = nil
	c.setMultiCount(-1)
	watching := len(c.watched) > 0
	defer s.watch.unwatchAll(c)
	if m.aborted {
		ctx.w.Error(errExecAbort)
		return
	}
	if watching && c.dirty.Load() {
		ctx.w.NullArray()
		return
	}
	if watching {
		// Exclusive: every commit before this one has reported its
		// changes, so the dirty flag below is final.
		s.commitMu.Lock()
		defer s.commitMu.Unlock()
	} else {
		s.commitMu.RLock()
		defer s.commitMu.RUnlock()
	}
	mark := len(ctx.w.buf)
	err := s.update(c, func(tx *stream.Tx) error {
		if watching {
			if c.dirty.Load() {
				ctx.w.NullArray()
				return nil
			}
			// A key that existed at WATCH and has expired since counts
			// as changed, as in Redis 7.0.
			for _, we := range c.watched {
				if !we.existed {
					continue
				}
				n, err := tx.Exists(we.db, []byte(we.key))
				if err != nil {
					return err
				}
				if !n {
					ctx.w.NullArray()
					return nil
				}
			}
		}
		ctx.w.Array(len(m.cmds))
		for _, q := range m.cmds {
			inner := cmdContext{c: c, args: q.args, w: ctx.w, db: c.db, inMulti: true}
			now := time.Now()
			c.noteCommand(q.spec.fullName(), now)
			s.call(&inner, q.spec, tx, now)
		}
		return nil
	})
	if err != nil {
		s.replaceReply(ctx, mark, err)
	}
}

// watchRegistry knows which clients watch which keys.
type watchRegistry struct {
	mu   sync.Mutex
	keys map[blockKey]map[*client]bool // guarded by mu: watcher -> key existed at WATCH
}

func (r *watchRegistry) init() { r.keys = make(map[blockKey]map[*client]bool) }

func (r *watchRegistry) has(c *client, db int, key []byte) bool {
	for _, we := range c.watched {
		if we.db == db && we.key == string(key) {
			return true
		}
	}
	return false
}

// add registers c's WATCH of key. Registration comes before the commit
// of any change the client must notice, since the existence check runs
// after it.
func (r *watchRegistry) add(c *client, db int, key []byte, existed bool) {
	bk := blockKey{db, string(key)}
	r.mu.Lock()
	m := r.keys[bk]
	if m == nil {
		m = make(map[*client]bool)
		r.keys[bk] = m
	}
	m[c] = existed
	r.mu.Unlock()
	c.watched = append(c.watched, watchedEntry{db: db, key: bk.key, existed: existed})
}

// unwatchAll forgets every key c watches and clears its dirty flag.
func (r *watchRegistry) unwatchAll(c *client) {
	if len(c.watched) > 0 {
		r.mu.Lock()
		for _, we := range c.watched {
			bk := blockKey{we.db, we.key}
			if m := r.keys[bk]; m != nil {
				delete(m, c)
				if len(m) == 0 {
					delete(r.keys, bk)
				}
			}
		}
		r.mu.Unlock()
		c.watched = nil
	}
	c.dirty.Store(false)
}

// touch marks the watchers of changed keys dirty. Deleting or flushing a
// key that did not exist at WATCH is no change (Redis: an already expired
// key being removed).
func (r *watchRegistry) touch(changes []stream.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.keys) == 0 {
		return
	}
	for _, ch := range changes {
		if ch.Kind == stream.Flushed {
			for bk, m := range r.keys {
				if !ch.AllDBs && bk.db != ch.DB {
					continue
				}
				for c, existed := range m {
					if existed {
						c.dirty.Store(true)
					}
				}
			}
			continue
		}
		for c, existed := range r.keys[blockKey{ch.DB, string(ch.Key)}] {
			if ch.Kind == stream.Deleted && !existed {
				continue
			}
			c.dirty.Store(true)
		}
	}
}
