package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/stream"
)

// stringCommands are the string commands; their documentation comes from
// command_meta.go.
func stringCommands() []*commandSpec {
	// one is a command on the key at argument 1.
	one := func(name string, arity int, flags cmdFlags, handler func(*cmdContext)) *commandSpec {
		return &commandSpec{name: name, arity: arity, flags: flags, firstKey: 1, lastKey: 1, step: 1, handler: handler}
	}
	return []*commandSpec{
		one("set", -3, flagWrite|flagDenyOOM, cmdSet),
		one("get", 2, flagReadOnly|flagFast, cmdGet),
		one("getdel", 2, flagWrite|flagFast, cmdGetDel),
		{name: "mget", arity: -2, flags: flagReadOnly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdMGet},
		{name: "mset", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2,
			handler: func(ctx *cmdContext) { cmdMSet(ctx, false) }},
		{name: "msetnx", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2,
			handler: func(ctx *cmdContext) { cmdMSet(ctx, true) }},
		one("setnx", 3, flagWrite|flagDenyOOM|flagFast, cmdSetNX),
		one("setex", 4, flagWrite|flagDenyOOM, func(ctx *cmdContext) { cmdSetEx(ctx, false) }),
		one("psetex", 4, flagWrite|flagDenyOOM, func(ctx *cmdContext) { cmdSetEx(ctx, true) }),
		one("incr", 2, flagWrite|flagDenyOOM|flagFast, func(ctx *cmdContext) { incrBy(ctx, 1) }),
		one("decr", 2, flagWrite|flagDenyOOM|flagFast, func(ctx *cmdContext) { incrBy(ctx, -1) }),
		one("incrby", 3, flagWrite|flagDenyOOM|flagFast, func(ctx *cmdContext) { cmdIncrBy(ctx, false) }),
		one("decrby", 3, flagWrite|flagDenyOOM|flagFast, func(ctx *cmdContext) { cmdIncrBy(ctx, true) }),
		one("incrbyfloat", 3, flagWrite|flagDenyOOM|flagFast, cmdIncrByFloat),
		one("append", 3, flagWrite|flagDenyOOM|flagFast, cmdAppend),
		one("strlen", 2, flagReadOnly|flagFast, cmdStrLen),
		one("getrange", 4, flagReadOnly, cmdGetRange),
	}
}

// setArgs are SET's parsed options.
type setArgs struct {
	opts stream.SetOptions
	// expire is the EX/PX/EXAT/PXAT argument, checked after the options.
	expire   []byte
	unitMs   bool
	absolute bool
}

// parseSet parses SET's options as Redis's parseExtendedStringArguments
// does; now is unix ms. The error is the reply text.
func parseSet(args [][]byte, now int64) (stream.SetOptions, string) {
	var a setArgs
	var ex, px, exat, pxat bool
	for j := 3; j < len(args); j++ {
		opt := lower(args[j])
		hasNext := j+1 < len(args)
		switch {
		case opt == "nx" && !a.opts.XX:
			a.opts.NX = true
		case opt == "xx" && !a.opts.NX:
			a.opts.XX = true
		case opt == "get":
			a.opts.Get = true
		case opt == "keepttl" && !ex && !px && !exat && !pxat:
			a.opts.KeepTTL = true
		case opt == "ex" && !a.opts.KeepTTL && !px && !exat && !pxat && hasNext:
			ex = true
			a.expire, a.unitMs, a.absolute = args[j+1], false, false
			j++
		case opt == "px" && !a.opts.KeepTTL && !ex && !exat && !pxat && hasNext:
			px = true
			a.expire, a.unitMs, a.absolute = args[j+1], true, false
			j++
		case opt == "exat" && !a.opts.KeepTTL && !ex && !px && !pxat && hasNext:
			exat = true
			a.expire, a.unitMs, a.absolute = args[j+1], false, true
			j++
		case opt == "pxat" && !a.opts.KeepTTL && !ex && !px && !exat && hasNext:
			pxat = true
			a.expire, a.unitMs, a.absolute = args[j+1], true, true
			j++
		default:
			return a.opts, errSyntax
		}
	}
	if a.expire != nil {
		at, errText := expireAt(a.expire, a.unitMs, a.absolute, now, "set")
		if errText != "" {
			return a.opts, errText
		}
		a.opts.ExpireAt = at
	}
	return a.opts, ""
}

// expireAt turns a SET/SETEX expiry argument into unix ms, with Redis's
// checks: a positive integer, no overflow.
func expireAt(arg []byte, unitMs, absolute bool, now int64, cmd string) (int64, string) {
	n, ok := parseRedisInt(arg)
	if !ok {
		return 0, errValueNotInteger
	}
	bad := errInvalidExpire(cmd)
	if n <= 0 || (!unitMs && n > math.MaxInt64/1000) {
		return 0, bad
	}
	if !unitMs {
		n *= 1000
	}
	if !absolute {
		if n > math.MaxInt64-now {
			return 0, bad
		}
		n += now
	}
	return n, ""
}

func cmdSet(ctx *cmdContext) {
	o, errText := parseSet(ctx.args, ctx.tx.Now())
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	old, hadOld, done, err := ctx.tx.Set(ctx.db, ctx.args[1], ctx.args[2], o)
	if err != nil {
		ctx.fail(err)
		return
	}
	switch {
	case o.Get && hadOld:
		ctx.w.Bulk(old)
	case o.Get:
		ctx.w.Null()
	case done:
		ctx.w.Simple("OK")
	default:
		ctx.w.Null()
	}
}

func cmdSetNX(ctx *cmdContext) {
	_, _, done, err := ctx.tx.Set(ctx.db, ctx.args[1], ctx.args[2], stream.SetOptions{NX: true})
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(b2i(done))
}

func cmdSetEx(ctx *cmdContext, unitMs bool) {
	at, errText := expireAt(ctx.args[2], unitMs, false, ctx.tx.Now(), lower(ctx.args[0]))
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	if _, _, _, err := ctx.tx.Set(ctx.db, ctx.args[1], ctx.args[3], stream.SetOptions{ExpireAt: at}); err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Simple("OK")
}

func cmdGet(ctx *cmdContext) {
	v, ok, err := ctx.tx.Get(ctx.db, ctx.args[1])
	switch {
	case err != nil:
		ctx.fail(err)
	case !ok:
		ctx.c.s.stats.misses.Add(1)
		ctx.w.Null()
	default:
		ctx.c.s.stats.hits.Add(1)
		ctx.w.Bulk(v)
	}
}

func cmdGetDel(ctx *cmdContext) {
	v, ok, err := ctx.tx.GetDel(ctx.db, ctx.args[1])
	switch {
	case err != nil:
		ctx.fail(err)
	case !ok:
		ctx.w.Null()
	default:
		ctx.w.Bulk(v)
	}
}

func cmdMGet(ctx *cmdContext) {
	keys := ctx.args[1:]
	vals := make([][]byte, len(keys))
	found := make([]bool, len(keys))
	for i, k := range keys {
		v, ok, err := ctx.tx.Get(ctx.db, k)
		if err != nil && err != stream.ErrWrongType {
			ctx.fail(err)
			return
		}
		vals[i], found[i] = v, ok && err == nil
	}
	ctx.w.Array(len(keys))
	for i := range keys {
		if found[i] {
			ctx.c.s.stats.hits.Add(1)
			ctx.w.Bulk(vals[i])
		} else {
			ctx.c.s.stats.misses.Add(1)
			ctx.w.Null()
		}
	}
}

func cmdMSet(ctx *cmdContext, nx bool) {
	args := ctx.args
	if len(args)%2 == 0 {
		ctx.w.Error(errWrongArity(string(args[0])))
		return
	}
	if nx {
		for i := 1; i < len(args); i += 2 {
			ok, err := ctx.tx.Exists(ctx.db, args[i])
			if err != nil {
				ctx.fail(err)
				return
			}
			if ok {
				ctx.w.Int(0)
				return
			}
		}
	}
	for i := 1; i < len(args); i += 2 {
		if _, _, _, err := ctx.tx.Set(ctx.db, args[i], args[i+1], stream.SetOptions{}); err != nil {
			ctx.fail(err)
			return
		}
	}
	if nx {
		ctx.w.Int(1)
		return
	}
	ctx.w.Simple("OK")
}

func incrBy(ctx *cmdContext, delta int64) {
	n, err := ctx.tx.IncrBy(ctx.db, ctx.args[1], delta)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(n)
}

func cmdIncrBy(ctx *cmdContext, decr bool) {
	d, ok := parseRedisInt(ctx.args[2])
	if !ok {
		ctx.w.Error(errValueNotInteger)
		return
	}
	if decr {
		if d == math.MinInt64 {
			ctx.w.Error(errDecrOverflow)
			return
		}
		d = -d
	}
	incrBy(ctx, d)
}

func cmdIncrByFloat(ctx *cmdContext) {
	d, err := strconv.ParseFloat(string(ctx.args[2]), 64)
	if err != nil || math.IsNaN(d) || len(ctx.args[2]) == 0 || strings.ContainsAny(string(ctx.args[2][:1]), " \t\r\n") {
		ctx.w.Error(errNotFloat)
		return
	}
	v, err := ctx.tx.IncrByFloat(ctx.db, ctx.args[1], d)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Bulk(v)
}

func cmdAppend(ctx *cmdContext) {
	n, err := ctx.tx.Append(ctx.db, ctx.args[1], ctx.args[2])
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(n)
}

func cmdStrLen(ctx *cmdContext) {
	n, err := ctx.tx.StrLen(ctx.db, ctx.args[1])
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(n)
}

func cmdGetRange(ctx *cmdContext) {
	start, ok1 := parseRedisInt(ctx.args[2])
	end, ok2 := parseRedisInt(ctx.args[3])
	if !ok1 || !ok2 {
		ctx.w.Error(errValueNotInteger)
		return
	}
	v, _, err := ctx.tx.Get(ctx.db, ctx.args[1])
	if err != nil {
		ctx.fail(err)
		return
	}
	// Redis's getrangeCommand arithmetic.
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		ctx.w.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		ctx.w.BulkString("")
		return
	}
	ctx.w.Bulk(v[start : end+1])
}
