package server

import (
	"math"
	"strconv"

	"github.com/eddy-streams/eddy/stream"
)

// keyspaceCommands are the generic key commands (and DBSIZE, FLUSHDB,
// FLUSHALL); their documentation comes from command_meta.go.
func keyspaceCommands() []*commandSpec {
	expire := func(name string, unitMs, abs bool) *commandSpec {
		return &commandSpec{name: name, arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1,
			handler: func(ctx *cmdContext) { cmdExpire(ctx, unitMs, abs) }}
	}
	ttl := func(name string, ms, abs bool) *commandSpec {
		return &commandSpec{name: name, arity: 2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: 1, step: 1,
			handler: func(ctx *cmdContext) { cmdTTL(ctx, ms, abs) }}
	}
	object := func(name string, handler func(*cmdContext)) *commandSpec {
		return &commandSpec{name: name, arity: 3, flags: flagReadOnly, firstKey: 2, lastKey: 2, step: 1, handler: handler}
	}
	return []*commandSpec{
		{name: "del", arity: -2, flags: flagWrite, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel},
		{name: "unlink", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel},
		{name: "exists", arity: -2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdExists},
		{name: "type", arity: 2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdType},
		{name: "rename", arity: 3, flags: flagWrite, firstKey: 1, lastKey: 2, step: 1,
			handler: func(ctx *cmdContext) { cmdRename(ctx, false) }},
		{name: "renamenx", arity: 3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 2, step: 1,
			handler: func(ctx *cmdContext) { cmdRename(ctx, true) }},
		{name: "keys", arity: 2, flags: flagReadOnly, handler: cmdKeys},
		{name: "scan", arity: -2, flags: flagReadOnly, handler: cmdScan},
		{name: "dbsize", arity: 1, flags: flagReadOnly | flagFast, handler: cmdDBSize},
		{name: "flushdb", arity: -1, flags: flagWrite, handler: func(ctx *cmdContext) { cmdFlush(ctx, false) }},
		{name: "flushall", arity: -1, flags: flagWrite, handler: func(ctx *cmdContext) { cmdFlush(ctx, true) }},
		expire("expire", false, false),
		expire("pexpire", true, false),
		expire("expireat", false, true),
		expire("pexpireat", true, true),
		ttl("ttl", false, false),
		ttl("pttl", true, false),
		ttl("expiretime", false, true),
		ttl("pexpiretime", true, true),
		{name: "persist", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPersist},
		{name: "object", arity: -2, subcommands: []*commandSpec{
			object("encoding", cmdObjectEncoding),
			object("freq", cmdObjectFreq),
			object("idletime", cmdObjectIdle),
			object("refcount", cmdObjectRefcount),
			{name: "help", arity: 2, flags: flagLoading | flagStale | flagNoKeyspace, handler: cmdObjectHelp},
		}},
	}
}

func cmdDel(ctx *cmdContext)    { countKeys(ctx, ctx.tx.Del) }
func cmdExists(ctx *cmdContext) { countKeys(ctx, ctx.tx.Exists) }

// countKeys replies how many of the keys in args[1:] op reported true for
// (deleted, existing), a key given twice counted each time as Redis does.
func countKeys(ctx *cmdContext, op func(db int, key []byte) (bool, error)) {
	n := int64(0)
	for _, k := range ctx.args[1:] {
		ok, err := op(ctx.db, k)
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
	cur, ok := parseScanCursor(args[1])
	if !ok {
		return a, errInvalidCursor
	}
	a.cursor = cur
	a.count = 10
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return a, errSyntax
		}
		switch lower(args[i]) {
		case "match":
			a.match = args[i+1]
		case "count":
			n, ok := parseRedisInt(args[i+1])
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
		switch lower(ctx.args[1]) {
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
		switch lower(o) {
		case "nx":
			nx = true
		case "xx":
			xx = true
		case "gt":
			gt = true
		case "lt":
			lt = true
		default:
			return a, errUnsupportedOption(o)
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
	when, ok := parseRedisInt(args[2])
	if !ok {
		return a, errValueNotInteger
	}
	bad := errInvalidExpire(name)
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
	a, errText := parseExpire(ctx.args, lower(ctx.args[0]), unitMs, abs, ctx.tx.Now())
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

// parseScanCursor reads a cursor as Redis 7.0's parseScanCursorOrReply
// does with strtoul: an optional sign ("-1" wraps around), decimal digits
// only, no leading space, nothing after, no overflow; "" reads as 0.
func parseScanCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true // strtoul reads nothing and stops at the end
	}
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
