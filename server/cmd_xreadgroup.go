package server

import (
	"bytes"
	"errors"
	"slices"

	"github.com/eddy-streams/eddy/stream"
)

// xreadGroupArgs are the parsed arguments of XREADGROUP.
type xreadGroupArgs struct {
	group, consumer []byte
	count           int64 // entries per key; 0 (also for a negative COUNT): all
	block           bool  // BLOCK given
	timeout         int64 // BLOCK's milliseconds; 0 waits forever
	noAck           bool
	keys            [][]byte
	ids             []xreadGroupID // one per key
}

// xreadGroupID is one ID argument of XREADGROUP.
type xreadGroupID struct {
	id      stream.ID
	newOnly bool // ">": entries never delivered to the group
	// errText is the ID's error. Redis checks each key and its group
	// before it parses that key's ID, so the handler reports it then.
	errText string
}

// xreadBlockedDefaultCount is the COUNT Redis 7.0 gives a blocked reader
// that set none (XREAD_BLOCKED_DEFAULT_COUNT), so that a wake-up never
// sends a huge batch.
const xreadBlockedDefaultCount = 1000

// parseXReadGroup parses XREADGROUP GROUP g c [COUNT n] [BLOCK ms]
// [NOACK] STREAMS key... id..., in the order Redis's xreadCommand checks
// (the loop it shares with XREAD, so unbalanced streams get XREAD's text).
// ID errors are left in ids for the handler (see xreadGroupID.errText).
func parseXReadGroup(args [][]byte) (xreadGroupArgs, string) {
	o, errText := parseXReadOptions(args, true)
	if errText != "" {
		return xreadGroupArgs{}, errText
	}
	a := xreadGroupArgs{group: o.group, consumer: o.consumer, count: o.count, block: o.block, timeout: o.timeout,
		noAck: o.noAck, keys: o.keys, ids: make([]xreadGroupID, len(o.ids))}
	for i, arg := range o.ids {
		switch id, special, errText := parseReadID(arg); special {
		case '$':
			a.ids[i].errText = errXReadGroupDollar
		case '>':
			a.ids[i].newOnly = true
		default:
			a.ids[i].id, a.ids[i].errText = id, errText
		}
	}
	return a, ""
}

// cmdXReadGroup serves new entries (">") or the consumer's own pending
// entries (an ID) of each key, or blocks (BLOCK, outside MULTI) until a
// key with ">" gets new entries, or replies nil.
func cmdXReadGroup(ctx *cmdContext) {
	a, errText := parseXReadGroup(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	// Every key and its group before anything is read. With one key and
	// a valid ID, XReadGroup's own look-up is that check: it fails before
	// it writes anything.
	single := len(a.keys) == 1 && a.ids[0].errText == ""
	for i, key := range a.keys {
		if single {
			break
		}
		if err := ctx.tx.CheckGroup(ctx.db, key, a.group); err != nil {
			if errors.Is(err, stream.ErrNoSuchKey) || errors.Is(err, stream.ErrNoGroup) {
				ctx.w.Error(errNoGroupRead(key, a.group))
			} else {
				ctx.fail(err)
			}
			return
		}
		if a.ids[i].errText != "" {
			ctx.w.Error(a.ids[i].errText)
			return
		}
	}
	rga := stream.ReadGroupArgs{Group: a.group, Consumer: a.consumer, Count: a.count, NoAck: a.noAck}
	var served []xreadResult
	for i, key := range a.keys {
		res, err := ctx.tx.XReadGroup(ctx.db, key, rga, a.ids[i].id, a.ids[i].newOnly)
		if single && (errors.Is(err, stream.ErrNoSuchKey) || errors.Is(err, stream.ErrNoGroup)) {
			ctx.w.Error(errNoGroupRead(key, a.group))
			return
		}
		if err != nil {
			ctx.fail(err)
			return
		}
		if res.Served {
			served = append(served, xreadResult{key, res.Entries})
		}
	}
	if len(served) > 0 {
		writeXRead(ctx.w, served)
		return
	}
	if !a.block || ctx.inMulti {
		// Inside MULTI Redis never blocks: it answers as on a timeout.
		ctx.w.NullArray()
		return
	}
	wait := &groupWait{db: ctx.db, keys: a.keys, args: rga, seen: make([]stream.ID, len(a.keys))}
	if wait.args.Count == 0 {
		wait.args.Count = xreadBlockedDefaultCount
	}
	wait.args.Woken = true
	for i, key := range a.keys {
		last, _, err := ctx.tx.LastID(ctx.db, key)
		if err != nil {
			ctx.fail(err)
			return
		}
		wait.seen[i] = last
	}
	ctx.block = &blockRequest{
		keys:      a.keys,
		timeout:   blockTimeout(a.timeout),
		retry:     wait.retry,
		onTimeout: func(w *replyWriter) { w.NullArray() },
	}
}

// groupWait is a blocked XREADGROUP: all its keys were ">" and had
// nothing new.
type groupWait struct {
	db   int
	keys [][]byte
	args stream.ReadGroupArgs // Woken set, Count defaulted
	// seen is each key's last generated ID when it was last looked at.
	// Redis serves a blocked group reader only when its key is signalled
	// ready (XADD, deletion, replacement, XGROUP DESTROY); edits that keep
	// the stream (XDEL, XTRIM, EXPIRE) do not signal it. A wake-up whose
	// key still has the last ID seen is therefore not served, even when
	// that ID is past the group's (its tail was deleted).
	seen []stream.ID
}

// retry runs after a wake-up, in an Update (XREADGROUP is a write), on
// the keys signalled (ctx.woken, commit order), as Redis 7.0 serves a
// ready key: one that is gone or no longer a stream ends the wait with
// UNBLOCKED, a destroyed group with NOGROUP; else, if its last generated
// ID moved and is past the group's last-delivered-id, the key is served
// alone (an empty list if the new entries were deleted since).
func (gw *groupWait) retry(ctx *cmdContext) bool {
	for _, key := range ctx.woken {
		// A key given twice is served once, as the first of its places.
		i := slices.IndexFunc(gw.keys, func(k []byte) bool { return bytes.Equal(k, key) })
		if i < 0 {
			continue
		}
		err := ctx.tx.CheckGroup(gw.db, key, gw.args.Group)
		switch {
		case errors.Is(err, stream.ErrNoSuchKey), errors.Is(err, stream.ErrWrongType):
			ctx.w.Error(errBlockedKeyGone)
			return true
		case errors.Is(err, stream.ErrNoGroup):
			ctx.w.Error(errBlockedGroupGone)
			return true
		case err != nil:
			ctx.w.Error(errorText(err))
			return true
		}
		last, _, err := ctx.tx.LastID(gw.db, key)
		if err != nil {
			ctx.w.Error(errorText(err))
			return true
		}
		if last == gw.seen[i] {
			continue
		}
		gw.seen[i] = last
		res, err := ctx.tx.XReadGroup(gw.db, key, gw.args, stream.MaxID, true)
		if err != nil {
			ctx.w.Error(errorText(err))
			return true
		}
		if res.Served {
			writeXRead(ctx.w, []xreadResult{{key, res.Entries}})
			return true
		}
	}
	return false
}
