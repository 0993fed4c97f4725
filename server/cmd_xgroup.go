package server

import (
	"errors"

	"github.com/eddy-streams/eddy/stream"
)

// xgroupOptions are the options after the ID of XGROUP CREATE and SETID.
type xgroupOptions struct {
	mkstream    bool  // CREATE only
	entriesRead int64 // ENTRIESREAD; stream.EntriesReadUnknown when not given
}

// parseXGroupOptions reads the options from args[5] on, as Redis 7.0
// does before it looks at the key: MKSTREAM (CREATE only) and
// ENTRIESREAD n, each any number of times; anything else is the
// subcommand syntax error. The argument count is checked later, once
// the key and group are known, as Redis does.
func parseXGroupOptions(args [][]byte, create bool) (xgroupOptions, string) {
	o := xgroupOptions{entriesRead: stream.EntriesReadUnknown}
	for i := 5; i < len(args); i++ {
		switch {
		case create && argIs(args[i], "mkstream"):
			o.mkstream = true
		case argIs(args[i], "entriesread") && i+1 < len(args):
			n, ok := parseRedisInt(args[i+1])
			if !ok {
				return o, errValueNotInteger
			}
			if n < 0 && n != stream.EntriesReadUnknown {
				return o, errEntriesReadRange
			}
			o.entriesRead = n
			i++
		default:
			return o, errSubcommandArgs(args[1], "XGROUP")
		}
	}
	return o, ""
}

// parseGroupID parses the ID of XGROUP CREATE (strict: no "-" or "+") or
// SETID (which takes "-" and "+" as 0-0 and the greatest ID). "$" is
// left to the caller.
func parseGroupID(b []byte, strict bool) (stream.ID, bool) {
	if !strict && len(b) == 1 {
		switch b[0] {
		case '-':
			return stream.ID{}, true
		case '+':
			return stream.MaxID, true
		}
	}
	if strict {
		return parseStrictID(b)
	}
	id, err := stream.ParseID(b, 0)
	return id, err == nil
}

// xgroupKey makes the checks every XGROUP subcommand but HELP makes before
// its own work, in Redis's order: options (CREATE, SETID), the key's type,
// the key's existence (unless CREATE MKSTREAM), then, for SETID,
// CREATECONSUMER and DELCONSUMER, the group. It reports whether to go on.
func xgroupKey(ctx *cmdContext, o xgroupOptions, needGroup bool) bool {
	key, group := ctx.args[2], ctx.args[3]
	_, ok, err := ctx.tx.LastID(ctx.db, key)
	switch {
	case err != nil:
		ctx.fail(err)
		return false
	case !ok && !o.mkstream:
		ctx.w.Error(errXGroupNoKey)
		return false
	case !needGroup:
		return true
	}
	if err := ctx.tx.CheckGroup(ctx.db, key, group); err != nil {
		if errors.Is(err, stream.ErrNoGroup) {
			ctx.w.Error(errNoGroup(group, key))
		} else {
			ctx.fail(err)
		}
		return false
	}
	return true
}

// cmdXGroupCreate is XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n].
func cmdXGroupCreate(ctx *cmdContext) {
	o, errText := parseXGroupOptions(ctx.args, true)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	if !xgroupKey(ctx, o, false) {
		return
	}
	if len(ctx.args) > 8 {
		ctx.w.Error(errSubcommandArgs(ctx.args[1], "XGROUP"))
		return
	}
	key, group, idArg := ctx.args[2], ctx.args[3], ctx.args[4]
	dollar := string(idArg) == "$"
	var id stream.ID
	if !dollar {
		var ok bool
		if id, ok = parseGroupID(idArg, true); !ok {
			ctx.w.Error(errInvalidStreamID)
			return
		}
	}
	err := ctx.tx.XGroupCreate(ctx.db, key, group, id, dollar, o.mkstream, o.entriesRead)
	switch {
	case errors.Is(err, stream.ErrGroupExists):
		ctx.w.Error(errBusyGroup)
	case err != nil:
		ctx.fail(err)
	default:
		ctx.w.Simple("OK")
	}
}

// cmdXGroupSetID is XGROUP SETID key group id|$ [ENTRIESREAD n].
func cmdXGroupSetID(ctx *cmdContext) {
	o, errText := parseXGroupOptions(ctx.args, false)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	if !xgroupKey(ctx, o, true) {
		return
	}
	if n := len(ctx.args); n != 5 && n != 7 {
		ctx.w.Error(errSubcommandArgs(ctx.args[1], "XGROUP"))
		return
	}
	idArg := ctx.args[4]
	dollar := string(idArg) == "$"
	var id stream.ID
	if !dollar {
		var ok bool
		if id, ok = parseGroupID(idArg, false); !ok {
			ctx.w.Error(errInvalidStreamID)
			return
		}
	}
	if err := ctx.tx.XGroupSetID(ctx.db, ctx.args[2], ctx.args[3], id, dollar, o.entriesRead); err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Simple("OK")
}

// cmdXGroupCreateConsumer replies 1 if it created the consumer, 0 if it
// existed.
func cmdXGroupCreateConsumer(ctx *cmdContext) {
	if !xgroupKey(ctx, xgroupOptions{}, true) {
		return
	}
	created, err := ctx.tx.XGroupCreateConsumer(ctx.db, ctx.args[2], ctx.args[3], ctx.args[4])
	if err != nil {
		ctx.fail(err)
		return
	}
	if created {
		ctx.w.Int(1)
	} else {
		ctx.w.Int(0)
	}
}

// cmdXGroupDelConsumer replies how many entries the consumer had pending
// (they leave the group's PEL with it).
func cmdXGroupDelConsumer(ctx *cmdContext) {
	if !xgroupKey(ctx, xgroupOptions{}, true) {
		return
	}
	n, err := ctx.tx.XGroupDelConsumer(ctx.db, ctx.args[2], ctx.args[3], ctx.args[4])
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Int(n)
}

// cmdXGroupDestroy replies 1 if the group existed. Clients blocked on the
// group in XREADGROUP wake and get NOGROUP (blocking.go).
func cmdXGroupDestroy(ctx *cmdContext) {
	if !xgroupKey(ctx, xgroupOptions{}, false) {
		return
	}
	done, err := ctx.tx.XGroupDestroy(ctx.db, ctx.args[2], ctx.args[3])
	if err != nil {
		ctx.fail(err)
		return
	}
	if done {
		ctx.w.Int(1)
	} else {
		ctx.w.Int(0)
	}
}

// xgroupHelp is XGROUP HELP's text, line by line as Redis 7.0 sends it.
var xgroupHelp = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

func cmdXGroupHelp(ctx *cmdContext) { writeHelp(ctx.w, xgroupHelp) }
