package server

import (
	"math"

	"github.com/eddy-streams/eddy/stream"
)

// streamCommands is the stream group of the command table: every Redis 7.0
// stream command, consumer groups included. Everything but the handlers is
// what redis-server 7.0.15 reports in COMMAND INFO and COMMAND DOCS (the
// docs' "history" has no field yet), so that client hints match.
func streamCommands() []*commandSpec {
	return []*commandSpec{
		{
			name: "xadd", arity: -5,
			flags:    flagWrite | flagDenyOOM | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXAdd,
			summary: "Appends a new entry to a stream",
			since:   "5.0.0", group: "stream",
			complexity: "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
			acl:        []string{"write", "stream", "fast"},
			tips:       []string{"nondeterministic_output"},
			keySpecs:   []keySpec{{flags: []string{"RW", "update"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
				{name: "nomkstream", typ: "pure-token", token: "NOMKSTREAM", since: "6.2.0", flags: []string{"optional"}},
				{name: "trim", typ: "block", flags: []string{"optional"}, args: []cmdArg{
					{name: "strategy", typ: "oneof", args: []cmdArg{
						{name: "maxlen", typ: "pure-token", token: "MAXLEN"},
						{name: "minid", typ: "pure-token", token: "MINID", since: "6.2.0"},
					}},
					{name: "operator", typ: "oneof", flags: []string{"optional"}, args: []cmdArg{
						{name: "equal", typ: "pure-token", token: "="},
						{name: "approximately", typ: "pure-token", token: "~"},
					}},
					{name: "threshold", typ: "string"},
					{name: "count", typ: "integer", token: "LIMIT", since: "6.2.0", flags: []string{"optional"}},
				}},
				{name: "id_or_auto", typ: "oneof", args: []cmdArg{
					{name: "auto_id", typ: "pure-token", token: "*"},
					{name: "id", typ: "string"},
				}},
				{name: "field_value", typ: "block", flags: []string{"multiple"}, args: []cmdArg{
					{name: "field", typ: "string"},
					{name: "value", typ: "string"},
				}},
			},
		},
		{
			name: "xrange", arity: -4,
			flags:    flagReadOnly,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXRange,
			summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval",
			since:   "5.0.0", group: "stream",
			complexity: "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
			acl:        []string{"read", "stream", "slow"},
			keySpecs:   []keySpec{{flags: []string{"RO", "access"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
				{name: "start", typ: "string"},
				{name: "end", typ: "string"},
				{name: "count", typ: "integer", token: "COUNT", flags: []string{"optional"}},
			},
		},
		{
			name: "xrevrange", arity: -4,
			flags:    flagReadOnly,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXRevRange,
			summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
			since:   "5.0.0", group: "stream",
			complexity: "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
			acl:        []string{"read", "stream", "slow"},
			keySpecs:   []keySpec{{flags: []string{"RO", "access"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
				{name: "end", typ: "string"},
				{name: "start", typ: "string"},
				{name: "count", typ: "integer", token: "COUNT", flags: []string{"optional"}},
			},
		},
		{
			name: "xread", arity: -4,
			flags:   flagReadOnly | flagBlocking | flagMovableKeys,
			handler: cmdXRead,
			summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
			since:   "5.0.0", group: "stream",
			complexity: "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
			acl:        []string{"read", "stream", "slow", "blocking"},
			keySpecs:   []keySpec{{flags: []string{"RO", "access"}, bsKeyword: "STREAMS", bsStartFrom: 1, lastKey: -1, keyStep: 1, limit: 2}},
			args: []cmdArg{
				{name: "count", typ: "integer", token: "COUNT", flags: []string{"optional"}},
				{name: "milliseconds", typ: "integer", token: "BLOCK", flags: []string{"optional"}},
				{name: "streams", typ: "block", token: "STREAMS", args: []cmdArg{
					{name: "key", typ: "key", flags: []string{"multiple"}},
					{name: "id", typ: "string", flags: []string{"multiple"}},
				}},
			},
		},
		{
			name: "xlen", arity: 2,
			flags:    flagReadOnly | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXLen,
			summary: "Return the number of entries in a stream",
			since:   "5.0.0", group: "stream",
			complexity: "O(1)",
			acl:        []string{"read", "stream", "fast"},
			keySpecs:   []keySpec{{flags: []string{"RO"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
			},
		},
		{
			name: "xdel", arity: -3,
			flags:    flagWrite | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXDel,
			summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
			since:   "5.0.0", group: "stream",
			complexity: "O(1) for each single item to delete in the stream, regardless of the stream size.",
			acl:        []string{"write", "stream", "fast"},
			keySpecs:   []keySpec{{flags: []string{"RW", "delete"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
				{name: "id", typ: "string", flags: []string{"multiple"}},
			},
		},
		{
			name: "xtrim", arity: -4,
			flags:    flagWrite,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXTrim,
			summary: "Trims the stream to (approximately if '~' is passed) a certain size",
			since:   "5.0.0", group: "stream",
			complexity: "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
			acl:        []string{"write", "stream", "slow"},
			tips:       []string{"nondeterministic_output"},
			keySpecs:   []keySpec{{flags: []string{"RW", "delete"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
				{name: "trim", typ: "block", args: []cmdArg{
					{name: "strategy", typ: "oneof", args: []cmdArg{
						{name: "maxlen", typ: "pure-token", token: "MAXLEN"},
						{name: "minid", typ: "pure-token", token: "MINID", since: "6.2.0"},
					}},
					{name: "operator", typ: "oneof", flags: []string{"optional"}, args: []cmdArg{
						{name: "equal", typ: "pure-token", token: "="},
						{name: "approximately", typ: "pure-token", token: "~"},
					}},
					{name: "threshold", typ: "string"},
					{name: "count", typ: "integer", token: "LIMIT", since: "6.2.0", flags: []string{"optional"}},
				}},
			},
		},
		{
			name: "xsetid", arity: -3,
			flags:    flagWrite | flagDenyOOM | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXSetID,
			summary: "An internal command for replicating stream values",
			since:   "5.0.0", group: "stream",
			complexity: "O(1)",
			acl:        []string{"write", "stream", "fast"},
			keySpecs:   []keySpec{{flags: []string{"RW", "update"}, bsIndex: 1, keyStep: 1}},
			args: []cmdArg{
				{name: "key", typ: "key"},
				{name: "last-id", typ: "string"},
				{name: "entries_added", typ: "integer", token: "ENTRIESADDED", since: "7.0.0", flags: []string{"optional"}},
				{name: "max_deleted_entry_id", typ: "string", token: "MAXDELETEDID", since: "7.0.0", flags: []string{"optional"}},
			},
		},
		// Consumer groups (cmd_xgroup.go, cmd_xreadgroup.go, cmd_xack.go,
		// cmd_xclaim.go): arity, flags and key positions as Redis 7.0.15
		// reports them; the documentation comes from command_meta.go.
		// Everything but XPENDING writes, XREADGROUP included even when it
		// only reads history (it counts a delivery).
		{
			name: "xreadgroup", arity: -7,
			flags:   flagWrite | flagBlocking | flagMovableKeys,
			handler: cmdXReadGroup,
		},
		{
			name: "xack", arity: -4,
			flags:    flagWrite | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXAck,
		},
		{
			name: "xpending", arity: -3,
			flags:    flagReadOnly,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXPending,
		},
		{
			name: "xclaim", arity: -6,
			flags:    flagWrite | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXClaim,
		},
		{
			name: "xautoclaim", arity: -6,
			flags:    flagWrite | flagFast,
			firstKey: 1, lastKey: 1, step: 1,
			handler: cmdXAutoClaim,
		},
		{
			name: "xgroup", arity: -2,
			subcommands: []*commandSpec{
				{
					name: "create", arity: -5,
					flags:    flagWrite | flagDenyOOM,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXGroupCreate,
				},
				{
					name: "setid", arity: -5,
					flags:    flagWrite,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXGroupSetID,
				},
				{
					name: "createconsumer", arity: 5,
					flags:    flagWrite | flagDenyOOM,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXGroupCreateConsumer,
				},
				{
					name: "delconsumer", arity: 5,
					flags:    flagWrite,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXGroupDelConsumer,
				},
				{
					name: "destroy", arity: 4,
					flags:    flagWrite,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXGroupDestroy,
				},
				{
					name: "help", arity: 2,
					flags:   flagLoading | flagStale | flagNoKeyspace,
					handler: cmdXGroupHelp,
				},
			},
		},
		{
			name: "xinfo", arity: -2,
			summary: "A container for stream introspection commands",
			since:   "5.0.0", group: "stream",
			complexity: "Depends on subcommand.",
			acl:        []string{"slow"},
			subcommands: []*commandSpec{
				// In the order Redis 7.0 lists them (its dict order).
				{
					name: "consumers", arity: 4,
					flags:    flagReadOnly,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXInfoConsumers,
					summary: "List the consumers in a consumer group",
					since:   "5.0.0", group: "stream",
					complexity: "O(1)",
					acl:        []string{"read", "stream", "slow"},
					tips:       []string{"nondeterministic_output"},
					keySpecs:   []keySpec{{flags: []string{"RO", "access"}, bsIndex: 2, keyStep: 1}},
					args: []cmdArg{
						{name: "key", typ: "key"},
						{name: "groupname", typ: "string"},
					},
				},
				{
					name: "help", arity: 2,
					flags:   flagLoading | flagStale | flagNoKeyspace,
					handler: cmdXInfoHelp,
					summary: "Show helpful text about the different subcommands",
					since:   "5.0.0", group: "stream",
					complexity: "O(1)",
					acl:        []string{"stream", "slow"},
				},
				{
					name: "stream", arity: -3,
					flags:    flagReadOnly,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXInfoStream,
					summary: "Get information about a stream",
					since:   "5.0.0", group: "stream",
					complexity: "O(1)",
					acl:        []string{"read", "stream", "slow"},
					keySpecs:   []keySpec{{flags: []string{"RO", "access"}, bsIndex: 2, keyStep: 1}},
					args: []cmdArg{
						{name: "key", typ: "key"},
						{name: "full", typ: "block", token: "FULL", flags: []string{"optional"}, args: []cmdArg{
							{name: "count", typ: "integer", token: "COUNT", flags: []string{"optional"}},
						}},
					},
				},
				{
					name: "groups", arity: 3,
					flags:    flagReadOnly,
					firstKey: 2, lastKey: 2, step: 1,
					handler: cmdXInfoGroups,
					summary: "List the consumer groups of a stream",
					since:   "5.0.0", group: "stream",
					complexity: "O(1)",
					acl:        []string{"read", "stream", "slow"},
					keySpecs:   []keySpec{{flags: []string{"RO", "access"}, bsIndex: 2, keyStep: 1}},
					args: []cmdArg{
						{name: "key", typ: "key"},
					},
				},
			},
		},
	}
}

// argIs reports whether arg is the keyword kw (given in lower case),
// compared ASCII-case-insensitively as Redis's strcasecmp does; Unicode
// folding (bytes.EqualFold) would accept spellings Redis refuses.
func argIs(arg []byte, kw string) bool {
	if len(arg) != len(kw) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

// parseRedisInt accepts exactly what Redis's string2ll accepts: an
// optional '-', then decimal digits without a leading zero ("0" alone is
// fine, "-0", "+1", " 1" and "01" are not), within int64.
func parseRedisInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		// "0" is the only number that starts with a zero.
		if len(b) == 1 && b[0] == '0' {
			return 0, true
		}
		return 0, false
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
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
