package server

import (
	"bytes"
	"math"
	"slices"
	"strconv"
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

// xreadOptions are the options XREAD and XREADGROUP share, as Redis's
// xreadCommand reads them for both.
type xreadOptions struct {
	count           int64 // entries per key; 0 (also for a negative COUNT): all
	block           bool  // BLOCK given
	timeout         int64 // BLOCK's milliseconds; 0 waits forever
	group, consumer []byte
	noAck           bool
	keys, ids       [][]byte // after STREAMS: one ID argument per key
}

// parseXReadOptions reads [GROUP g c] [COUNT n] [BLOCK ms] [NOACK]
// STREAMS key... id... in the order Redis's xreadCommand checks them, with
// its texts; readGroup says which command it is (XREAD refuses GROUP and
// NOACK, XREADGROUP requires GROUP). A GROUP given twice keeps the last
// one. Everything after STREAMS is keys and IDs, option names included.
func parseXReadOptions(args [][]byte, readGroup bool) (xreadOptions, string) {
	var o xreadOptions
	streamsAt := 0
	for i := 1; i < len(args) && streamsAt == 0; i++ {
		more := len(args) - 1 - i
		switch opt := args[i]; {
		case argIs(opt, "block") && more > 0:
			i++
			ms, bad := parseTimeoutMs(args[i])
			if bad != "" {
				return o, bad
			}
			o.block, o.timeout = true, ms
		case argIs(opt, "count") && more > 0:
			i++
			n, ok := parseRedisInt(args[i])
			if !ok {
				return o, errValueNotInteger
			}
			o.count = max(n, 0)
		case argIs(opt, "streams") && more > 0:
			if (len(args)-i-1)%2 != 0 {
				return o, errXReadUnbalanced
			}
			streamsAt = i + 1
		case argIs(opt, "group") && more >= 2:
			if !readGroup {
				return o, errXReadGroupOption
			}
			o.group, o.consumer = args[i+1], args[i+2]
			i += 2
		case argIs(opt, "noack"):
			if !readGroup {
				return o, errXReadNoAck
			}
			o.noAck = true
		default:
			return o, errSyntax
		}
	}
	if streamsAt == 0 {
		return o, errSyntax
	}
	if readGroup && o.group == nil {
		return o, errXReadGroupMissing
	}
	n := (len(args) - streamsAt) / 2
	o.keys, o.ids = args[streamsAt:streamsAt+n], args[streamsAt+n:]
	return o, ""
}

// parseXRead parses XREAD [COUNT n] [BLOCK ms] STREAMS key... id...,
// checking options in Redis's order. ID errors are left in ids for the
// handler (see xreadID.errText).
func parseXRead(args [][]byte) (xreadArgs, string) {
	o, errText := parseXReadOptions(args, false)
	if errText != "" {
		return xreadArgs{}, errText
	}
	a := xreadArgs{count: o.count, block: o.block, timeout: o.timeout, keys: o.keys, ids: make([]xreadID, len(o.ids))}
	for i, arg := range o.ids {
		switch id, special, errText := parseReadID(arg); special {
		case '$':
			a.ids[i].dollar = true
		case '>':
			a.ids[i].errText = errXReadGroupID
		default:
			a.ids[i].id, a.ids[i].errText = id, errText
		}
	}
	return a, ""
}

// parseReadID parses one ID after STREAMS: "$" and ">" come back as
// special, for the command to take or refuse; anything else must be a
// strict ID (errText errInvalidStreamID otherwise).
func parseReadID(arg []byte) (id stream.ID, special byte, errText string) {
	if len(arg) == 1 && (arg[0] == '$' || arg[0] == '>') {
		return stream.ID{}, arg[0], ""
	}
	id, ok := parseStrictID(arg)
	if !ok {
		return id, 0, errInvalidStreamID
	}
	return id, 0, ""
}

// blockTimeout converts BLOCK's milliseconds, saturating where a Duration
// would overflow (about 292 years, which is forever enough).
func blockTimeout(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// xreadResult is one key's part of an XREAD or XREADGROUP reply.
type xreadResult struct {
	key     []byte
	entries []stream.Entry
}

// writeXRead writes the keys served, by XREAD or XREADGROUP: an array of
// [key, entries] pairs in RESP2, a map from key to entries in RESP3 (as
// Redis 7.0). An entry with nil Fields, which only XREADGROUP returns (a
// pending entry deleted from the stream), is its ID and a nil array.
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
		w.Array(len(r.entries))
		for _, e := range r.entries {
			writeEntryOrDeleted(w, e)
		}
	}
}

// writeEntryOrDeleted writes an entry; nil Fields (deleted from the
// stream, still pending) is written as Redis does: the ID and a nil array.
func writeEntryOrDeleted(w *replyWriter, e stream.Entry) {
	if e.Fields != nil {
		w.Entry(e)
		return
	}
	w.Array(2)
	w.ID(e.ID)
	w.NullArray()
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
		share:     xreadShare(ctx.w.proto, db, keys, after, count),
	}
}

// xreadShare names a blocked XREAD's read for blockRequest.share: two
// with the same name, retried with the same woken keys and nothing
// committed in between, write the same reply.
func xreadShare(proto, db int, keys [][]byte, after []stream.ID, count int64) string {
	b := make([]byte, 0, 32+len(keys)*24)
	b = strconv.AppendInt(b, int64(proto), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, count, 10)
	for i, k := range keys {
		b = appendLenKey(append(b, ' '), k)
		b = append(b, ' ')
		b = append(b, after[i].String()...)
	}
	return string(b)
}

// appendLenKey appends key as len:key, so that names built of several
// keys cannot collide (xreadShare, sharedKey).
func appendLenKey(b, key []byte) []byte {
	b = strconv.AppendInt(b, int64(len(key)), 10)
	b = append(b, ':')
	return append(b, key...)
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
