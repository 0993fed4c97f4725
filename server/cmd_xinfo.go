package server

import (
	"errors"

	"github.com/eddy-streams/eddy/stream"
)

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
		w.BulkString("groups")
		writeGroupsFull(w, in.GroupDetails)
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

// cmdXInfoGroups lists the stream's consumer groups in name order.
func cmdXInfoGroups(ctx *cmdContext) {
	key := ctx.args[2]
	if !xinfoKey(ctx, key) {
		return
	}
	gs, err := ctx.tx.XInfoGroups(ctx.db, key)
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Array(len(gs))
	for _, g := range gs {
		ctx.w.Map(6)
		ctx.w.BulkString("name")
		ctx.w.Bulk(g.Name)
		ctx.w.BulkString("consumers")
		ctx.w.Int(g.Consumers)
		ctx.w.BulkString("pending")
		ctx.w.Int(g.Pending)
		ctx.w.BulkString("last-delivered-id")
		ctx.w.ID(g.LastDelivered)
		writeEntriesReadLag(ctx.w, &g)
	}
}

// writeEntriesReadLag writes the entries-read and lag fields, each nil
// when Redis cannot tell it.
func writeEntriesReadLag(w *replyWriter, g *stream.GroupInfo) {
	w.BulkString("entries-read")
	writeIntOrNull(w, g.EntriesRead)
	w.BulkString("lag")
	writeIntOrNull(w, g.Lag)
}

func writeIntOrNull(w *replyWriter, v *int64) {
	if v == nil {
		w.Null()
		return
	}
	w.Int(*v)
}

// cmdXInfoConsumers lists a group's consumers in name order.
func cmdXInfoConsumers(ctx *cmdContext) {
	key, group := ctx.args[2], ctx.args[3]
	if !xinfoKey(ctx, key) {
		return
	}
	cs, err := ctx.tx.XInfoConsumers(ctx.db, key, group)
	if errors.Is(err, stream.ErrNoGroup) {
		ctx.w.Error(errNoGroup(group, key))
		return
	}
	if err != nil {
		ctx.fail(err)
		return
	}
	ctx.w.Array(len(cs))
	for _, c := range cs {
		ctx.w.Map(3)
		ctx.w.BulkString("name")
		ctx.w.Bulk(c.Name)
		ctx.w.BulkString("pending")
		ctx.w.Int(c.Pending)
		ctx.w.BulkString("idle")
		ctx.w.Int(c.Idle)
	}
}

// writeGroupsFull writes the "groups" of XINFO STREAM FULL: each group
// with its PEL (ID, owner, delivery time, deliveries) and its consumers,
// each with its own PEL (ID, delivery time, deliveries).
func writeGroupsFull(w *replyWriter, gs []stream.GroupFull) {
	w.Array(len(gs))
	for _, g := range gs {
		w.Map(7)
		w.BulkString("name")
		w.Bulk(g.Name)
		w.BulkString("last-delivered-id")
		w.ID(g.LastDelivered)
		writeEntriesReadLag(w, &g.GroupInfo)
		w.BulkString("pel-count")
		w.Int(g.Pending)
		w.BulkString("pending")
		w.Array(len(g.PEL))
		for _, pe := range g.PEL {
			w.Array(4)
			w.ID(pe.ID)
			w.Bulk(pe.Consumer)
			w.Int(pe.DeliveryTime)
			w.Int(int64(pe.Deliveries))
		}
		w.BulkString("consumers")
		w.Array(len(g.Consumers))
		for _, c := range g.Consumers {
			w.Map(4)
			w.BulkString("name")
			w.Bulk(c.Name)
			w.BulkString("seen-time")
			w.Int(c.SeenTime)
			w.BulkString("pel-count")
			w.Int(c.Pending)
			w.BulkString("pending")
			w.Array(len(c.PEL))
			for _, pe := range c.PEL {
				w.Array(3)
				w.ID(pe.ID)
				w.Int(pe.DeliveryTime)
				w.Int(int64(pe.Deliveries))
			}
		}
	}
}

// xinfoHelp is XINFO HELP's text, line by line as Redis 7.0 sends it.
var xinfoHelp = []string{
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

func cmdXInfoHelp(ctx *cmdContext) { writeHelp(ctx.w, xinfoHelp) }
