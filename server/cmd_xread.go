package server

import (
	"bytes"
	"math"
	"slices"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// xreadArgs are the parsed arguments of XREAD.
type xreadArgs struct {
	count   int64 // entries per stream; 0 (also for a negative COUNT): all
	block   bool  // BLOCK given
	timeout int64 // BLOCK's milliseconds; 0 waits forever
	keys    [][]byte
	ids     []xreadID // one per key
}

// xreadID is one ID argument of XREAD.
type xreadID struct {
	id     stream.ID
	dollar bool // "$": the stream's last ID when the command first runs
	// errText is the ID's error. Redis checks each key's type before it
	// parses that key's ID, so the handler reports it in that order.
	errText string
}

// parseXRead parses XREAD [COUNT n] [BLOCK ms] STREAMS key... id...,
// checking options in Redis's order. ID errors are left in ids for the
// handler (see xreadID.errText).
func parseXRead(args [][]byte) (xreadArgs, string) {
	var a xreadArgs
	streamsAt := 0
	for i := 1; i < len(args) && streamsAt == 0; i++ {
		more := len(args) - 1 - i
		switch opt := args[i]; {
		case argIs(opt, "block") && more > 0:
			i++
			ms, ok := parseRedisInt(args[i])
			if !ok {
				return a, errTimeoutNotInteger
			}
			if ms < 0 {
				return a, errTimeoutNegative
			}
			a.block, a.timeout = true, ms
		case argIs(opt, "count") && more > 0:
			i++
			n, ok := parseRedisInt(args[i])
			if !ok {
				return a, errValueNotInteger
			}
			a.count = max(n, 0)
		case argIs(opt, "streams") && more > 0:
			if (len(args)-i-1)%2 != 0 {
				return a, errXReadUnbalanced
			}
			streamsAt = i + 1
		case argIs(opt, "group") && more >= 2:
			return a, errXReadGroupOption
		case argIs(opt, "noack"):
			return a, errXReadNoAck
		default:
			return a, errSyntax
		}
	}
	if streamsAt == 0 {
		return a, errSyntax
	}
	n := (len(args) - streamsAt) / 2
	a.keys = args[streamsAt : streamsAt+n]
	a.ids = make([]xreadID, n)
	for i, arg := range args[streamsAt+n:] {
		switch {
		case len(arg) == 1 && arg[0] == '$':
			a.ids[i].dollar = true
		case len(arg) == 1 && arg[0] == '>':
			a.ids[i].errText = errXReadGroupID
		default:
			id, ok := parseStrictID(arg)
			if !ok {
				a.ids[i].errText = errInvalidStreamID
			}
			a.ids[i].id = id
		}
	}
	return a, ""
}

// blockTimeout converts BLOCK's milliseconds, saturating where a Duration
// would overflow (about 292 years, which is forever enough).
func blockTimeout(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// xreadResult is one stream's part of an XREAD reply.
type xreadResult struct {
	key     []byte
	entries []stream.Entry
}

// writeXRead writes the streams served: an array of [key, entries] pairs
// in RESP2, a map from key to entries in RESP3 (as Redis 7.0).
func writeXRead(w *replyWriter, rs []xreadResult) {
	if w.proto == 3 {
		w.Map(len(rs))
	} else {
		w.Array(len(rs))
	}
	for _, r := range rs {
		if w.proto != 3 {
			w.Array(2)
		}
		w.Bulk(r.key)
		w.Entries(r.entries)
	}
}

// cmdXRead serves the entries after each given ID, or blocks (BLOCK,
// outside MULTI) until a stream is appended to, or replies nil.
func cmdXRead(ctx *cmdContext) {
	a, errText := parseXRead(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	// Resolve "$" now: a blocked reader waits for what comes after the
	// stream's last ID at this moment, not at each wake-up.
	after := make([]stream.ID, len(a.keys))
	for i, key := range a.keys {
		last, ok, err := ctx.tx.LastID(ctx.db, key)
		if err != nil {
			ctx.w.Error(errorText(err))
			return
		}
		switch {
		case a.ids[i].errText != "":
			ctx.w.Error(a.ids[i].errText)
			return
		case a.ids[i].dollar && ok:
			after[i] = last
		case a.ids[i].dollar:
			after[i] = stream.ID{}
		default:
			after[i] = a.ids[i].id
		}
	}
	var served []xreadResult
	for i, key := range a.keys {
		es, err := ctx.tx.XRead(ctx.db, key, after[i], a.count)
		if err != nil {
			ctx.w.Error(errorText(err))
			return
		}
		if len(es) > 0 {
			served = append(served, xreadResult{key, es})
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
	db, keys, count := ctx.db, a.keys, a.count
	ctx.block = &blockRequest{
		keys:    keys,
		timeout: blockTimeout(a.timeout),
		retry: func(rc *cmdContext) bool {
			return xreadRetry(rc, db, keys, after, count)
		},
		onTimeout: func(w *replyWriter) { w.NullArray() },
	}
}

// xreadRetry serves a blocked XREAD after a wake-up. As Redis 7.0 does, it
// answers with the first woken stream (commit order, ctx.woken) whose last
// generated ID moved past the reader's ID, alone; if entries were deleted
// since, that stream's list is empty. A key now missing or of another type
// keeps the reader waiting.
func xreadRetry(ctx *cmdContext, db int, keys [][]byte, after []stream.ID, count int64) bool {
	for _, key := range ctx.woken {
		// A key given twice waits for the ID given first, as in Redis.
		i := slices.IndexFunc(keys, func(k []byte) bool { return bytes.Equal(k, key) })
		if i < 0 {
			continue
		}
		last, ok, err := ctx.tx.LastID(db, key)
		if err != nil || !ok || !after[i].Less(last) {
			continue
		}
		es, err := ctx.tx.XRead(db, key, after[i], count)
		if err != nil {
			ctx.w.Error(errorText(err))
			return true
		}
		writeXRead(ctx.w, []xreadResult{{key, es}})
		return true
	}
	return false
}
