package server

import (
	"errors"
	"strconv"

	"github.com/eddy-streams/eddy/stream"
)

// groupExists checks key's type and group the way XACK, XPENDING,
// XCLAIM and XAUTOCLAIM do: a wrong type is an error; a missing key or
// group is reported false for the caller to answer as its command does.
// ok is false when an error reply was written.
func groupExists(ctx *cmdContext, key, group []byte) (exists, ok bool) {
	err := ctx.tx.CheckGroup(ctx.db, key, group)
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, stream.ErrNoSuchKey), errors.Is(err, stream.ErrNoGroup):
		return false, true
	}
	ctx.fail(err)
	return false, false
}

// requireGroup is groupExists for XPENDING, XCLAIM and XAUTOCLAIM, which
// answer a missing key or group with NOGROUP: false when an error reply
// was written.
func requireGroup(ctx *cmdContext, key, group []byte) bool {
	exists, ok := groupExists(ctx, key, group)
	if ok && !exists {
		ctx.w.Error(errNoKeyOrGroup(key, group))
	}
	return ok && exists
}

// cmdXAck is XACK key group id...: how many of the IDs were pending. A
// missing key or group acknowledges nothing, before the IDs are even
// parsed, as in Redis; an invalid ID fails the whole command.
func cmdXAck(ctx *cmdContext) {
	key, group := ctx.args[1], ctx.args[2]
	var buf [16]stream.ID
	ids := buf[:0]
	for _, arg := range ctx.args[3:] {
		id, ok := parseStrictID(arg)
		if !ok {
			// The key and group decide between 0 and the error; XAck
			// looks them up itself otherwise (0 when missing).
			switch exists, ok := groupExists(ctx, key, group); {
			case !ok:
			case !exists:
				ctx.w.Int(0)
			default:
				ctx.w.Error(errInvalidStreamID)
			}
			return
		}
		ids = append(ids, id)
	}
	n, err := ctx.tx.XAck(ctx.db, key, group, ids)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(n)
}

// xpendingArgs are the parsed arguments of XPENDING.
type xpendingArgs struct {
	summary bool // XPENDING key group
	rng     stream.PendingRangeArgs
}

// parseXPending parses XPENDING key group [[IDLE ms] start end count
// [consumer]] as Redis 7.0 does, before it looks at the key: 3 or 6 to 9
// arguments; IDLE's value, then COUNT, then start, then end. Arguments
// after the consumer are ignored, as Redis ignores them.
func parseXPending(args [][]byte) (xpendingArgs, string) {
	var a xpendingArgs
	if len(args) == 3 {
		a.summary = true
		return a, ""
	}
	if len(args) < 6 || len(args) > 9 {
		return a, errSyntax
	}
	at := 3
	if argIs(args[3], "idle") {
		ms, ok := parseRedisInt(args[4])
		if !ok {
			return a, errValueNotInteger
		}
		if len(args) < 8 {
			return a, errSyntax
		}
		a.rng.MinIdle = ms
		at += 2
	}
	n, ok := parseRedisInt(args[at+2])
	if !ok {
		return a, errValueNotInteger
	}
	a.rng.Count = max(n, 0)
	start, errText := parseBound(args[at], false)
	if errText != "" {
		return a, errText
	}
	end, errText := parseBound(args[at+1], true)
	if errText != "" {
		return a, errText
	}
	a.rng.Start, a.rng.End = start, end
	if at+3 < len(args) {
		a.rng.Consumer, a.rng.HasConsumer = args[at+3], true
	}
	return a, ""
}

// parseBound parses a range bound ("-", "+", "(id", id) as XRANGE does,
// with its error texts.
func parseBound(b []byte, end bool) (stream.ID, string) {
	bd, err := stream.ParseRangeBound(b, end)
	switch {
	case err == nil:
		return bd.ID, ""
	case errors.Is(err, stream.ErrExclusiveEdge) && end:
		return stream.ID{}, errInvalidEndID
	case errors.Is(err, stream.ErrExclusiveEdge):
		return stream.ID{}, errInvalidStartID
	}
	return stream.ID{}, errInvalidStreamID
}

// cmdXPending is XPENDING: the summary (count, smallest and greatest
// pending ID, pending count per consumer) or the extended form (one line
// per pending entry: ID, owner, idle ms, deliveries).
func cmdXPending(ctx *cmdContext) {
	a, errText := parseXPending(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	key, group := ctx.args[1], ctx.args[2]
	if !requireGroup(ctx, key, group) {
		return
	}
	if a.summary {
		sum, err := ctx.tx.XPendingSummary(ctx.db, key, group)
		if err != nil {
			ctx.fail(err)
			return
		}
		writePendingSummary(ctx.w, sum)
		return
	}
	pes, err := ctx.tx.XPendingRange(ctx.db, key, group, a.rng)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Array(len(pes))
	for _, pe := range pes {
		ctx.w.Array(4)
		ctx.w.ID(pe.ID)
		ctx.w.Bulk(pe.Consumer)
		ctx.w.Int(pe.Idle)
		ctx.w.Int(int64(pe.Deliveries))
	}
}

// writePendingSummary writes XPENDING key group; the per-consumer counts
// are bulk strings in Redis, not integers.
func writePendingSummary(w *replyWriter, sum stream.PendingSummary) {
	w.Array(4)
	w.Int(sum.Count)
	if sum.Count == 0 {
		w.Null()
		w.Null()
		w.NullArray()
		return
	}
	w.ID(sum.First)
	w.ID(sum.Last)
	w.Array(len(sum.Consumers))
	var tmp [20]byte
	for _, c := range sum.Consumers {
		w.Array(2)
		w.Bulk(c.Name)
		w.Bulk(strconv.AppendInt(tmp[:0], c.Pending, 10))
	}
}
