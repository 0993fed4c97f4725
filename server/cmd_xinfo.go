package server

import "github.com/eddy-streams/eddy/stream"

// xinfoStreamArgs are the options of XINFO STREAM key [FULL [COUNT n]].
type xinfoStreamArgs struct {
	full  bool
	count int64 // FULL's entry limit; 0: all
}

// xinfoFullDefaultCount is Redis's default COUNT for FULL, also used for
// a negative COUNT, so that a huge stream is not sent whole by accident.
const xinfoFullDefaultCount = 10

// parseXInfoStream parses the options after the key. Redis reads them
// only once it has found the stream, so the handler calls this after the
// key check.
func parseXInfoStream(args [][]byte) (xinfoStreamArgs, string) {
	opts := args[3:]
	if len(opts) == 0 {
		return xinfoStreamArgs{}, ""
	}
	a := xinfoStreamArgs{full: true, count: xinfoFullDefaultCount}
	if !argIs(opts[0], "full") {
		return a, errSubcommandArgs(args[1], "XINFO")
	}
	if len(opts) == 1 {
		return a, ""
	}
	if len(opts) != 3 || !argIs(opts[1], "count") {
		return a, errSubcommandArgs(args[1], "XINFO")
	}
	n, ok := parseRedisInt(opts[2])
	if !ok {
		return a, errValueNotInteger
	}
	if n >= 0 {
		a.count = n
	}
	return a, ""
}

// xinfoKey checks that key holds a stream, replying the error Redis sends
// when it does not ("no such key" or WRONGTYPE); it reports whether to go on.
func xinfoKey(ctx *cmdContext, key []byte) bool {
	_, ok, err := ctx.tx.LastID(ctx.db, key)
	switch {
	case err != nil:
		ctx.w.Error(errorText(err))
		return false
	case !ok:
		ctx.w.Error(errNoSuchKey)
		return false
	}
	return true
}

// cmdXInfoStream replies XINFO STREAM's map, field by field as Redis 7.0.
func cmdXInfoStream(ctx *cmdContext) {
	key := ctx.args[2]
	if !xinfoKey(ctx, key) {
		return
	}
	a, errText := parseXInfoStream(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	in, err := ctx.tx.XInfo(ctx.db, key, a.full, a.count)
	if err != nil {
		ctx.w.Error(errorText(err))
		return
	}
	writeXInfoStream(ctx.w, in, a.full)
}

func writeXInfoStream(w *replyWriter, in *stream.Info, full bool) {
	if full {
		w.Map(9)
	} else {
		w.Map(10)
	}
	w.BulkString("length")
	w.Int(int64(in.Length))
	w.BulkString("radix-tree-keys")
	w.Int(int64(in.RadixTreeKeys))
	w.BulkString("radix-tree-nodes")
	w.Int(int64(in.RadixTreeNodes))
	w.BulkString("last-generated-id")
	w.ID(in.LastGenerated)
	w.BulkString("max-deleted-entry-id")
	w.ID(in.MaxDeleted)
	w.BulkString("entries-added")
	w.Int(int64(in.EntriesAdded))
	w.BulkString("recorded-first-entry-id")
	w.ID(in.RecordedFirst)
	if full {
		w.BulkString("entries")
		w.Entries(in.Entries)
		// Consumer groups come with their own issue; until then a stream
		// has none.
		w.BulkString("groups")
		w.Array(0)
		return
	}
	w.BulkString("groups")
	w.Int(int64(in.Groups))
	w.BulkString("first-entry")
	writeEntryOrNull(w, in.First)
	w.BulkString("last-entry")
	writeEntryOrNull(w, in.Last)
}

// writeEntryOrNull writes one entry, or a null bulk string when there is
// none (an empty stream's first-entry and last-entry).
func writeEntryOrNull(w *replyWriter, e *stream.Entry) {
	if e == nil {
		w.Null()
		return
	}
	w.Entry(*e)
}

// cmdXInfoGroups lists the stream's consumer groups: none until consumer
// groups exist.
func cmdXInfoGroups(ctx *cmdContext) {
	if !xinfoKey(ctx, ctx.args[2]) {
		return
	}
	ctx.w.Array(0)
}

// cmdXInfoConsumers lists a group's consumers; with no consumer groups
// yet, every group is missing.
func cmdXInfoConsumers(ctx *cmdContext) {
	if !xinfoKey(ctx, ctx.args[2]) {
		return
	}
	ctx.w.Error(errNoGroup(ctx.args[3], ctx.args[2]))
}

// cmdXInfoHelp replies XINFO HELP's text, line by line as Redis 7.0.
func cmdXInfoHelp(ctx *cmdContext) {
	lines := [...]string{
		"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
		"HELP",
		"    Prints this help.",
	}
	ctx.w.Array(len(lines))
	for _, l := range lines {
		ctx.w.Simple(l)
	}
}
