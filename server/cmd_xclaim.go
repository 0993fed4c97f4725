package server

import "github.com/eddy-streams/eddy/stream"

// parseXClaim parses XCLAIM key group consumer min-idle id... [options]
// after the key and group were found, in Redis 7.0's order: min-idle,
// then the IDs (up to the first argument that is not one), then the
// options. The engine's ClaimArgs is the parse result.
func parseXClaim(args [][]byte) (stream.ClaimArgs, string) {
	var a stream.ClaimArgs
	minIdle, ok := parseRedisInt(args[4])
	if !ok {
		return a, errXClaimMinIdle
	}
	a.MinIdle = max(minIdle, 0)
	j := 5
	for ; j < len(args); j++ {
		id, ok := parseStrictID(args[j])
		if !ok {
			break
		}
		a.IDs = append(a.IDs, id)
	}
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		switch {
		case argIs(opt, "force"):
			a.Force = true
		case argIs(opt, "justid"):
			a.JustID = true
		case argIs(opt, "idle") && more > 0:
			j++
			n, ok := parseRedisInt(args[j])
			if !ok {
				return a, errXClaimIdle
			}
			// IDLE and TIME set the same delivery time: the last wins.
			a.Idle, a.Time = &n, nil
		case argIs(opt, "time") && more > 0:
			j++
			n, ok := parseRedisInt(args[j])
			if !ok {
				return a, errXClaimTime
			}
			a.Time, a.Idle = &n, nil
		case argIs(opt, "retrycount") && more > 0:
			j++
			n, ok := parseRedisInt(args[j])
			if !ok {
				return a, errXClaimRetryCount
			}
			a.RetryCount = &n
		case argIs(opt, "lastid") && more > 0:
			j++
			id, ok := parseStrictID(args[j])
			if !ok {
				return a, errInvalidStreamID
			}
			a.LastID = &id
		default:
			return a, errXClaimOption(opt)
		}
	}
	return a, ""
}

// cmdXClaim is XCLAIM: the entries (or, with JUSTID, the IDs) it moved to
// the consumer. Redis finds the key and group before parsing anything.
func cmdXClaim(ctx *cmdContext) {
	key, group, consumer := ctx.args[1], ctx.args[2], ctx.args[3]
	if !requireGroup(ctx, key, group) {
		return
	}
	a, errText := parseXClaim(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	es, err := ctx.tx.XClaim(ctx.db, key, group, consumer, a)
	if err != nil {
		ctx.fail(err)
		return
	}
	writeClaimed(ctx.w, es, a.JustID)
}

// writeClaimed writes claimed entries, or only their IDs with JUSTID.
func writeClaimed(w *replyWriter, es []stream.Entry, justID bool) {
	w.Array(len(es))
	for _, e := range es {
		if justID {
			w.ID(e.ID)
		} else {
			w.Entry(e)
		}
	}
}

// xautoclaimMaxCount is the greatest COUNT Redis 7.0 accepts: LONG_MAX
// divided by the larger of sizeof(streamID) and its attempts factor.
const xautoclaimMaxCount = (1<<63 - 1) / 16

// xautoclaimAllocLimit stands for the allocation Redis makes before it
// claims anything: COUNT stream IDs of 16 bytes. Eddy allocates nothing
// of the kind, but above this COUNT the reference redis-server 7.0.15
// (jemalloc, 64-bit Linux) fails that allocation and replies an error,
// so Eddy replies the same.
const xautoclaimAllocLimit = 3298534883328

// parseXAutoClaim parses XAUTOCLAIM key group consumer min-idle start
// [COUNT n] [JUSTID], all before the key is looked at, as Redis does.
func parseXAutoClaim(args [][]byte) (stream.AutoClaimArgs, string) {
	a := stream.AutoClaimArgs{Count: 100}
	minIdle, ok := parseRedisInt(args[4])
	if !ok {
		return a, errXAutoClaimMinIdle
	}
	a.MinIdle = max(minIdle, 0)
	start, errText := parseBound(args[5], false)
	if errText != "" {
		return a, errText
	}
	a.Start = start
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch opt := args[j]; {
		case argIs(opt, "count") && more > 0:
			n, ok := parseRedisInt(args[j+1])
			if !ok || n < 1 || n > xautoclaimMaxCount {
				return a, errXAutoClaimCount
			}
			a.Count = n
			j++
		case argIs(opt, "justid"):
			a.JustID = true
		default:
			return a, errSyntax
		}
	}
	return a, ""
}

// cmdXAutoClaim is XAUTOCLAIM: the next cursor, the entries (or IDs) it
// claimed, and the pending IDs it dropped because their entries were
// deleted.
func cmdXAutoClaim(ctx *cmdContext) {
	a, errText := parseXAutoClaim(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	key, group, consumer := ctx.args[1], ctx.args[2], ctx.args[3]
	if !requireGroup(ctx, key, group) {
		return
	}
	if a.Count > xautoclaimAllocLimit {
		ctx.w.Error(errXAutoClaimMemory)
		return
	}
	res, err := ctx.tx.XAutoClaim(ctx.db, key, group, consumer, a)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Array(3)
	ctx.w.ID(res.Next)
	writeClaimed(ctx.w, res.Claimed, a.JustID)
	ctx.w.Array(len(res.Deleted))
	for _, id := range res.Deleted {
		ctx.w.ID(id)
	}
}
