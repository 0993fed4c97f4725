package server

import (
	"github.com/eddy-streams/eddy/stream"
)

// streamCommands is the stream group of the command table: every Redis 7.0
// stream command, consumer groups included, with arity, flags and key
// positions as redis-server 7.0.15 reports them; the documentation comes
// from command_meta.go. Everything but XPENDING among the consumer group
// commands writes, XREADGROUP included even when it only reads history
// (it counts a delivery).
func streamCommands() []*commandSpec {
	return []*commandSpec{
		{name: "xadd", arity: -5, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXAdd},
		{name: "xrange", arity: -4, flags: flagReadOnly, firstKey: 1, lastKey: 1, step: 1, handler: cmdXRange},
		{name: "xrevrange", arity: -4, flags: flagReadOnly, firstKey: 1, lastKey: 1, step: 1, handler: cmdXRevRange},
		{name: "xread", arity: -4, flags: flagReadOnly | flagBlocking | flagMovableKeys, handler: cmdXRead},
		{name: "xlen", arity: 2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXLen},
		{name: "xdel", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXDel},
		{name: "xtrim", arity: -4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdXTrim},
		{name: "xsetid", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXSetID},
		{name: "xreadgroup", arity: -7, flags: flagWrite | flagBlocking | flagMovableKeys, handler: cmdXReadGroup},
		{name: "xack", arity: -4, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXAck},
		{name: "xpending", arity: -3, flags: flagReadOnly, firstKey: 1, lastKey: 1, step: 1, handler: cmdXPending},
		{name: "xclaim", arity: -6, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXClaim},
		{name: "xautoclaim", arity: -6, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdXAutoClaim},
		{name: "xgroup", arity: -2, subcommands: []*commandSpec{
			{name: "create", arity: -5, flags: flagWrite | flagDenyOOM, firstKey: 2, lastKey: 2, step: 1, handler: cmdXGroupCreate},
			{name: "setid", arity: -5, flags: flagWrite, firstKey: 2, lastKey: 2, step: 1, handler: cmdXGroupSetID},
			{name: "createconsumer", arity: 5, flags: flagWrite | flagDenyOOM, firstKey: 2, lastKey: 2, step: 1, handler: cmdXGroupCreateConsumer},
			{name: "delconsumer", arity: 5, flags: flagWrite, firstKey: 2, lastKey: 2, step: 1, handler: cmdXGroupDelConsumer},
			{name: "destroy", arity: 4, flags: flagWrite, firstKey: 2, lastKey: 2, step: 1, handler: cmdXGroupDestroy},
			{name: "help", arity: 2, flags: flagLoading | flagStale | flagNoKeyspace, handler: cmdXGroupHelp},
		}},
		// Subcommands in the order Redis 7.0 lists them (its dict order).
		{name: "xinfo", arity: -2, subcommands: []*commandSpec{
			{name: "consumers", arity: 4, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdXInfoConsumers},
			{name: "help", arity: 2, flags: flagLoading | flagStale | flagNoKeyspace, handler: cmdXInfoHelp},
			{name: "stream", arity: -3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdXInfoStream},
			{name: "groups", arity: 3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdXInfoGroups},
		}},
	}
}

// parseStrictID parses an ID where "-" and "+" are not allowed (Redis's
// streamParseStrictIDOrReply without the "ms-*" form).
func parseStrictID(b []byte) (stream.ID, bool) {
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		return stream.ID{}, false
	}
	id, err := stream.ParseID(b, 0)
	return id, err == nil
}

// parseTrimOptions reads the options XADD and XTRIM share, from args[2]
// on, as Redis's streamParseAddOrTrimArgsOrReply does, in its order. For
// XADD (xadd true) it also takes NOMKSTREAM and stops at the first
// argument that is no option: the ID, whose index it returns (len(args)
// when there is none). checkTrim must follow, after XADD's ID is parsed:
// Redis parses the ID inside its option loop, so an invalid ID is
// reported before the checks that look at the options as a whole.
func parseTrimOptions(args [][]byte, xadd bool) (t stream.Trim, noMkStream bool, idPos int, errText string) {
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			// The common case: no option, an automatic ID.
			return t, noMkStream, i, ""
		case (argIs(opt, "maxlen") || argIs(opt, "minid")) && more > 0:
			if t.Strategy != stream.TrimNone {
				return t, false, 0, errTrimBoth
			}
			t.Approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				t.Approx = next[0] == '~'
				i++
			}
			i++
			if argIs(opt, "maxlen") {
				n, ok := parseRedisInt(args[i])
				if !ok {
					return t, false, 0, errValueNotInteger
				}
				if n < 0 {
					return t, false, 0, errMaxLenNegative
				}
				t.Strategy, t.MaxLen = stream.TrimMaxLen, n
			} else {
				id, ok := parseStrictID(args[i])
				if !ok {
					return t, false, 0, errInvalidStreamID
				}
				t.Strategy, t.MinID = stream.TrimMinID, id
			}
		case argIs(opt, "limit") && more > 0:
			n, ok := parseRedisInt(args[i+1])
			if !ok {
				return t, false, 0, errValueNotInteger
			}
			if n < 0 {
				return t, false, 0, errLimitNegative
			}
			t.Limit, t.LimitGiven = n, true
			i++
		case xadd && argIs(opt, "nomkstream"):
			noMkStream = true
		case xadd:
			// Not an option, so it must be the ID; the caller parses it.
			return t, noMkStream, i, ""
		default:
			return t, false, 0, errSyntax
		}
	}
	return t, noMkStream, i, ""
}

// checkTrim makes the checks Redis makes once all options are read.
func checkTrim(t stream.Trim, xadd bool) string {
	// Redis tests the limit's value here, not whether LIMIT was given:
	// "LIMIT 0" alone passes this check and fails the "~" one below.
	if t.Limit != 0 && t.Strategy == stream.TrimNone {
		return errLimitNoStrategy
	}
	if !xadd && t.Strategy == stream.TrimNone {
		return errXTrimNoStrategy
	}
	if t.LimitGiven && !t.Approx {
		return errLimitNoApprox
	}
	return ""
}
