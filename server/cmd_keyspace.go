package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/stream"
)

// Key-spec shorthands for single-key and all-keys commands.
func oneKey(flags ...string) []keySpec {
	return []keySpec{{flags: flags, bsIndex: 1, lastKey: 0, keyStep: 1}}
}

func allKeys(flags ...string) []keySpec {
	return []keySpec{{flags: flags, bsIndex: 1, lastKey: -1, keyStep: 1}}
}

var keyArg = cmdArg{name: "key", typ: "key"}

func keyspaceCommands() []*commandSpec {
	expireArgs := func(unit string) []cmdArg {
		return []cmdArg{keyArg, {name: unit, typ: "integer"},
			{name: "condition", typ: "oneof", since: "7.0.0", flags: []string{"optional"}, args: []cmdArg{
				{name: "nx", typ: "pure-token", token: "NX"}, {name: "xx", typ: "pure-token", token: "XX"},
				{name: "gt", typ: "pure-token", token: "GT"}, {name: "lt", typ: "pure-token", token: "LT"}}}}
	}
	expire := func(name string, unitMs, abs bool, since, summary, unit string) *commandSpec {
		return &commandSpec{name: name, arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1,
			handler: func(ctx *cmdContext) { cmdExpire(ctx, unitMs, abs) },
			summary: summary, since: since, group: "generic", complexity: "O(1)",
			acl: []string{"keyspace", "write", "fast"}, keySpecs: oneKey("RW", "update"), args: expireArgs(unit)}
	}
	ttl := func(name string, ms, abs bool, since, summary string) *commandSpec {
		return &commandSpec{name: name, arity: 2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: 1, step: 1,
			handler: func(ctx *cmdContext) { cmdTTL(ctx, ms, abs) },
			summary: summary, since: since, group: "generic", complexity: "O(1)",
			acl: []string{"keyspace", "read", "fast"}, keySpecs: oneKey("RO", "access"), args: []cmdArg{keyArg},
			tips: []string{"nondeterministic_output"}}
	}
	flushArgs := []cmdArg{{name: "flush-type", typ: "oneof", flags: []string{"optional"}, args: []cmdArg{
		{name: "async", typ: "pure-token", token: "ASYNC", since: "4.0.0"}, {name: "sync", typ: "pure-token", token: "SYNC", since: "6.2.0"}}}}
	return []*commandSpec{
		{name: "del", arity: -2, flags: flagWrite, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel,
			summary: "Delete a key", since: "1.0.0", group: "generic",
			complexity: "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
			acl:        []string{"keyspace", "write", "slow"}, keySpecs: allKeys("RM", "delete"),
			tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			args: []cmdArg{{name: "key", typ: "key", flags: []string{"multiple"}}}},
		{name: "unlink", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel,
			summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", since: "4.0.0", group: "generic",
			complexity: "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
			acl:        []string{"keyspace", "write", "fast"}, keySpecs: allKeys("RM", "delete"),
			tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			args: []cmdArg{{name: "key", typ: "key", flags: []string{"multiple"}}}},
		{name: "exists", arity: -2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdExists,
			summary: "Determine if a key exists", since: "1.0.0", group: "generic", complexity: "O(N) where N is the number of keys to check.",
			acl: []string{"keyspace", "read", "fast"}, keySpecs: allKeys("RO"),
			tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			args: []cmdArg{{name: "key", typ: "key", flags: []string{"multiple"}}}},
		{name: "type", arity: 2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdType,
			summary: "Determine the type stored at key", since: "1.0.0", group: "generic", complexity: "O(1)",
			acl: []string{"keyspace", "read", "fast"}, keySpecs: oneKey("RO"), args: []cmdArg{keyArg}},
		{name: "rename", arity: 3, flags: flagWrite, firstKey: 1, lastKey: 2, step: 1,
			handler: func(ctx *cmdContext) { cmdRename(ctx, false) },
			summary: "Rename a key", since: "1.0.0", group: "generic", complexity: "O(1)",
			acl:      []string{"keyspace", "write", "slow"},
			keySpecs: []keySpec{{flags: []string{"RW", "access", "delete"}, bsIndex: 1, keyStep: 1}, {flags: []string{"OW", "update"}, bsIndex: 2, keyStep: 1}},
			args:     []cmdArg{keyArg, {name: "newkey", typ: "key", keySpec: 1}}},
		{name: "renamenx", arity: 3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 2, step: 1,
			handler: func(ctx *cmdContext) { cmdRename(ctx, true) },
			summary: "Rename a key, only if the new key does not exist", since: "1.0.0", group: "generic", complexity: "O(1)",
			acl:      []string{"keyspace", "write", "fast"},
			keySpecs: []keySpec{{flags: []string{"RW", "access", "delete"}, bsIndex: 1, keyStep: 1}, {flags: []string{"OW", "insert"}, bsIndex: 2, keyStep: 1}},
			args:     []cmdArg{keyArg, {name: "newkey", typ: "key", keySpec: 1}}},
		{name: "keys", arity: 2, flags: flagReadOnly, handler: cmdKeys,
			summary: "Find all keys matching the given pattern", since: "1.0.0", group: "generic",
			complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
			acl:        []string{"keyspace", "read", "slow", "dangerous"}, tips: []string{"request_policy:all_shards", "nondeterministic_output_order"},
			args: []cmdArg{{name: "pattern", typ: "pattern"}}},
		{name: "scan", arity: -2, flags: flagReadOnly, handler: cmdScan,
			summary: "Incrementally iterate the keys space", since: "2.8.0", group: "generic",
			complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			acl:        []string{"keyspace", "read", "slow"}, tips: []string{"nondeterministic_output", "request_policy:special"},
			args: []cmdArg{{name: "cursor", typ: "integer"}, {name: "pattern", typ: "pattern", token: "MATCH", flags: []string{"optional"}},
				{name: "count", typ: "integer", token: "COUNT", flags: []string{"optional"}}, {name: "type", typ: "string", token: "TYPE", since: "6.0.0", flags: []string{"optional"}}}},
		{name: "dbsize", arity: 1, flags: flagReadOnly | flagFast, handler: cmdDBSize,
			summary: "Return the number of keys in the selected database", since: "1.0.0", group: "server", complexity: "O(1)",
			acl: []string{"keyspace", "read", "fast"}, tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}},
		{name: "flushdb", arity: -1, flags: flagWrite, handler: func(ctx *cmdContext) { cmdFlush(ctx, false) },
			summary: "Remove all keys from the current database", since: "1.0.0", group: "server",
			complexity: "O(N) where N is the number of keys in the selected database",
			acl:        []string{"keyspace", "write", "slow", "dangerous"}, tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, args: flushArgs},
		{name: "flushall", arity: -1, flags: flagWrite, handler: func(ctx *cmdContext) { cmdFlush(ctx, true) },
			summary: "Remove all keys from all databases", since: "1.0.0", group: "server",
			complexity: "O(N) where N is the total number of keys in all databases",
			acl:        []string{"keyspace", "write", "slow", "dangerous"}, tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, args: flushArgs},
		expire("expire", false, false, "1.0.0", "Set a key's time to live in seconds", "seconds"),
		expire("pexpire", true, false, "2.6.0", "Set a key's time to live in milliseconds", "milliseconds"),
		expire("expireat", false, true, "1.2.0", "Set the expiration for a key as a UNIX timestamp", "unix-time-seconds"),
		expire("pexpireat", true, true, "2.6.0", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "unix-time-milliseconds"),
		ttl("ttl", false, false, "1.0.0", "Get the time to live for a key in seconds"),
		ttl("pttl", true, false, "2.6.0", "Get the time to live for a key in milliseconds"),
		ttl("expiretime", false, true, "7.0.0", "Get the expiration Unix timestamp for a key"),
		ttl("pexpiretime", true, true, "7.0.0", "Get the expiration Unix timestamp for a key in milliseconds"),
		{name: "persist", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPersist,
			summary: "Remove the expiration from a key", since: "2.2.0", group: "generic", complexity: "O(1)",
			acl: []string{"keyspace", "write", "fast"}, keySpecs: oneKey("RW", "update"), args: []cmdArg{keyArg}},
		{name: "object", arity: -2, summary: "A container for object introspection commands", since: "2.2.3", group: "generic",
			complexity: "Depends on subcommand.", acl: []string{"slow"},
			subcommands: []*commandSpec{
				{name: "encoding", arity: 3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectEncoding,
					summary: "Inspect the internal encoding of a Redis object", since: "2.2.3", group: "generic", complexity: "O(1)",
					acl: []string{"keyspace", "read", "slow"}, tips: []string{"nondeterministic_output"},
					keySpecs: []keySpec{{flags: []string{"RO"}, bsIndex: 2, keyStep: 1}}, args: []cmdArg{keyArg}},
				{name: "freq", arity: 3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectFreq,
					summary: "Get the logarithmic access frequency counter of a Redis object", since: "4.0.0", group: "generic", complexity: "O(1)",
					acl: []string{"keyspace", "read", "slow"}, tips: []string{"nondeterministic_output"},
					keySpecs: []keySpec{{flags: []string{"RO"}, bsIndex: 2, keyStep: 1}}, args: []cmdArg{keyArg}},
				{name: "idletime", arity: 3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectIdle,
					summary: "Get the time since a Redis object was last accessed", since: "2.2.3", group: "generic", complexity: "O(1)",
					acl: []string{"keyspace", "read", "slow"}, tips: []string{"nondeterministic_output"},
					keySpecs: []keySpec{{flags: []string{"RO"}, bsIndex: 2, keyStep: 1}}, args: []cmdArg{keyArg}},
				{name: "refcount", arity: 3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectRefcount,
					summary: "Get the number of references to the value of the key", since: "2.2.3", group: "generic", complexity: "O(1)",
					acl: []string{"keyspace", "read", "slow"}, tips: []string{"nondeterministic_output"},
					keySpecs: []keySpec{{flags: []string{"RO"}, bsIndex: 2, keyStep: 1}}, args: []cmdArg{keyArg}},
				{name: "help", arity: 2, flags: flagLoading | flagStale | flagNoKeyspace, handler: cmdObjectHelp,
					summary: "Show helpful text about the different subcommands", since: "6.2.0", group: "generic", complexity: "O(1)",
					acl: []string{"keyspace", "slow"}},
			}},
	}
}

func cmdDel(ctx *cmdContext) {
	n := int64(0)
	for _, k := range ctx.args[1:] {
		ok, err := ctx.tx.Del(ctx.db, k)
		if err != nil {
			ctx.fail(err)
			return
		}
		if ok {
			n++
		}
	}
	ctx.w.Int(n)
}

func cmdExists(ctx *cmdContext) {
	n := int64(0)
	for _, k := range ctx.args[1:] {
		ok, err := ctx.tx.Exists(ctx.db, k)
		if err != nil {
			ctx.fail(err)
			return
		}
		if ok {
			n++
		}
	}
	ctx.w.Int(n)
}

func cmdType(ctx *cmdContext) {
	t, err := ctx.tx.Type(ctx.db, ctx.args[1])
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Simple(t)
}

func cmdRename(ctx *cmdContext, nx bool) {
	ok, err := ctx.tx.Rename(ctx.db, ctx.args[1], ctx.args[2], nx)
	if err != nil {
		ctx.fail(err)
		return
	}
	if !nx {
		ctx.w.Simple("OK")
		return
	}
	ctx.w.Int(b2i(ok))
}

func cmdKeys(ctx *cmdContext) {
	keys, err := ctx.tx.Keys(ctx.db, ctx.args[1])
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Array(len(keys))
	for _, k := range keys {
		ctx.w.Bulk(k)
	}
}

// scanArgs are SCAN's parsed arguments.
type scanArgs struct {
	cursor uint64
	match  []byte
	count  int64
	typ    string
}

// parseScan parses SCAN cursor [MATCH p] [COUNT n] [TYPE t]; the error is
// the reply text.
func parseScan(args [][]byte) (scanArgs, string) {
	var a scanArgs
	cur, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		return a, errInvalidCursor
	}
	a.cursor = cur
	a.count = 10
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return a, errSyntax
		}
		switch strings.ToLower(string(args[i])) {
		case "match":
			a.match = args[i+1]
		case "count":
			n, ok := parseLL(args[i+1])
			if !ok {
				return a, errValueNotInteger
			}
			if n < 1 {
				return a, errSyntax
			}
			a.count = n
		case "type":
			a.typ = string(args[i+1])
		default:
			return a, errSyntax
		}
	}
	return a, ""
}

func cmdScan(ctx *cmdContext) {
	a, errText := parseScan(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	next, keys, err := ctx.tx.Scan(ctx.db, a.cursor, a.match, a.count, a.typ)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Array(2)
	ctx.w.BulkString(strconv.FormatUint(next, 10))
	ctx.w.Array(len(keys))
	for _, k := range keys {
		ctx.w.Bulk(k)
	}
}

func cmdDBSize(ctx *cmdContext) {
	n, err := ctx.tx.DBSize(ctx.db)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(n)
}

func cmdFlush(ctx *cmdContext, all bool) {
	if len(ctx.args) > 2 {
		ctx.w.Error(errSyntax)
		return
	}
	if len(ctx.args) == 2 {
		switch strings.ToLower(string(ctx.args[1])) {
		case "sync", "async":
		default:
			ctx.w.Error(errSyntax)
			return
		}
	}
	var err error
	if all {
		err = ctx.tx.FlushAll()
	} else {
		err = ctx.tx.FlushDB(ctx.db)
	}
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Simple("OK")
}

// expireArgs are EXPIRE's parsed arguments.
type expireArgs struct {
	atMs int64
	cond stream.ExpireCond
}

// parseExpire parses the time and condition of EXPIRE and its relatives
// in Redis's order: options first, then the time. now is unix ms.
func parseExpire(args [][]byte, name string, unitMs, abs bool, now int64) (expireArgs, string) {
	var a expireArgs
	var nx, xx, gt, lt bool
	for _, o := range args[3:] {
		switch strings.ToLower(string(o)) {
		case "nx":
			nx = true
		case "xx":
			xx = true
		case "gt":
			gt = true
		case "lt":
			lt = true
		default:
			return a, errUnsupportedOption + cString(o)
		}
	}
	if nx && (xx || gt || lt) {
		return a, errExpireNXXX
	}
	if gt && lt {
		return a, errExpireGTLT
	}
	switch {
	case nx:
		a.cond = stream.ExpireNX
	case xx:
		a.cond = stream.ExpireXX
	case gt:
		a.cond = stream.ExpireGT
	case lt:
		a.cond = stream.ExpireLT
	}
	when, ok := parseLL(args[2])
	if !ok {
		return a, errValueNotInteger
	}
	bad := errInvalidExpire + name + "' command"
	if !unitMs {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return a, bad
		}
		when *= 1000
	}
	if !abs {
		if when > math.MaxInt64-now {
			return a, bad
		}
		when += now
	}
	a.atMs = when
	return a, ""
}

func cmdExpire(ctx *cmdContext, unitMs, abs bool) {
	a, errText := parseExpire(ctx.args, strings.ToLower(string(ctx.args[0])), unitMs, abs, ctx.tx.Now())
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	ok, err := ctx.tx.Expire(ctx.db, ctx.args[1], a.atMs, a.cond)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(b2i(ok))
}

func cmdTTL(ctx *cmdContext, ms, abs bool) {
	var v int64
	var err error
	if abs {
		v, err = ctx.tx.ExpireTime(ctx.db, ctx.args[1])
	} else {
		v, err = ctx.tx.PTTL(ctx.db, ctx.args[1])
	}
	if err != nil {
		ctx.fail(err)
		return
	}
	if v >= 0 && !ms {
		v = (v + 500) / 1000
	}
	ctx.w.Int(v)
}

func cmdPersist(ctx *cmdContext) {
	ok, err := ctx.tx.Persist(ctx.db, ctx.args[1])
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(b2i(ok))
}

func cmdObjectEncoding(ctx *cmdContext) {
	enc, ok, err := ctx.tx.ObjectEncoding(ctx.db, ctx.args[2])
	switch {
	case err != nil:
		ctx.fail(err)
	case !ok:
		ctx.w.Null()
	default:
		ctx.w.BulkString(enc)
	}
}

// objectProbe answers OBJECT subcommands whose value Eddy does not track:
// null for a missing key, else reply.
func objectProbe(ctx *cmdContext, reply func()) {
	ok, err := ctx.tx.Exists(ctx.db, ctx.args[2])
	switch {
	case err != nil:
		ctx.fail(err)
	case !ok:
		ctx.w.Null()
	default:
		reply()
	}
}

func cmdObjectFreq(ctx *cmdContext) {
	objectProbe(ctx, func() { ctx.w.Error(errNoLFU) })
}

func cmdObjectIdle(ctx *cmdContext) {
	objectProbe(ctx, func() { ctx.w.Int(0) })
}

func cmdObjectRefcount(ctx *cmdContext) {
	objectProbe(ctx, func() { ctx.w.Int(1) })
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Print this help.",
}

func cmdObjectHelp(ctx *cmdContext) { writeHelp(ctx.w, objectHelp) }

// b2i is Redis's :1/:0 reply (an integer in RESP3 too).
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
