package server

import (
	"errors"

	"github.com/eddy-streams/eddy/stream"
)

// xrangeArgs are the parsed arguments of XRANGE and XREVRANGE.
type xrangeArgs struct {
	start, end stream.ID // inclusive, exclusive bounds already moved in
	count      int64     // -1: no COUNT; 0 (also for a negative COUNT): nil reply
}

// parseXRange parses XRANGE key start end [COUNT n], or XREVRANGE key end
// start [COUNT n] when rev. Redis parses the start bound first whichever
// position it has, then the end, then COUNT.
func parseXRange(args [][]byte, rev bool) (xrangeArgs, string) {
	a := xrangeArgs{count: -1}
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, err := stream.ParseRangeBound(startArg, false)
	if err != nil {
		if errors.Is(err, stream.ErrExclusiveEdge) {
			return a, errInvalidStartID
		}
		return a, errInvalidStreamID
	}
	end, err := stream.ParseRangeBound(endArg, true)
	if err != nil {
		if errors.Is(err, stream.ErrExclusiveEdge) {
			return a, errInvalidEndID
		}
		return a, errInvalidStreamID
	}
	a.start, a.end = start.ID, end.ID
	for j := 4; j < len(args); j++ {
		if !argIs(args[j], "count") || j+1 >= len(args) {
			return a, errSyntax
		}
		n, ok := parseRedisInt(args[j+1])
		if !ok {
			return a, errValueNotInteger
		}
		a.count = max(n, 0)
		j++
	}
	return a, ""
}

func cmdXRange(ctx *cmdContext)    { xrangeGeneric(ctx, false) }
func cmdXRevRange(ctx *cmdContext) { xrangeGeneric(ctx, true) }

func xrangeGeneric(ctx *cmdContext, rev bool) {
	a, errText := parseXRange(ctx.args, rev)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	key := ctx.args[1]
	if a.count == 0 {
		// Redis looks the key up first: a missing key is an empty array and
		// a wrong type an error; only an existing stream gets the nil.
		_, ok, err := ctx.tx.LastID(ctx.db, key)
		switch {
		case err != nil:
			ctx.w.Error(errorText(err))
		case !ok:
			ctx.w.Array(0)
		default:
			ctx.w.NullArray()
		}
		return
	}
	// The entries go straight from the store into the reply; the array's
	// length is known once they are written.
	at := len(ctx.w.buf)
	n, err := ctx.tx.XRangeEach(ctx.db, key, a.start, a.end, a.count, rev, func(e stream.Entry) error {
		ctx.w.Entry(e)
		return nil
	})
	if err != nil {
		ctx.w.buf = ctx.w.buf[:at]
		ctx.w.Error(errorText(err))
		return
	}
	ctx.w.insertArrayHeader(at, n)
}
