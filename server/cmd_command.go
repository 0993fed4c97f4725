package server

import "strings"

// COMMAND and its subcommands: what the table says about each command,
// written as Redis 7.0 writes it (COMMAND INFO, DOCS, LIST, COUNT,
// GETKEYS).

var commandFlagNames = []struct {
	f    cmdFlags
	name string
}{
	{flagWrite, "write"}, {flagReadOnly, "readonly"}, {flagDenyOOM, "denyoom"}, {flagAdmin, "admin"},
	{flagPubSub, "pubsub"}, {flagNoScript, "noscript"}, {flagBlocking, "blocking"}, {flagLoading, "loading"},
	{flagStale, "stale"}, {flagSkipMonitor, "skip_monitor"}, {flagSkipSlowlog, "skip_slowlog"}, {flagFast, "fast"},
	{flagNoAuth, "no_auth"}, {flagMayReplicate, "may_replicate"}, {flagNoMandatoryKeys, "no_mandatory_keys"},
	{flagNoAsyncLoading, "no_async_loading"}, {flagNoMulti, "no_multi"}, {flagMovableKeys, "movablekeys"}, {flagAllowBusy, "allow_busy"},
}

func writeCommandInfo(w *replyWriter, spec *commandSpec) {
	w.Array(10)
	w.BulkString(spec.fullName())
	w.Int(int64(spec.arity))
	var flags []string
	for _, f := range commandFlagNames {
		if spec.flags&f.f != 0 {
			flags = append(flags, f.name)
		}
	}
	writeFlagSet(w, flags)
	w.Int(int64(spec.firstKey))
	w.Int(int64(spec.lastKey))
	w.Int(int64(spec.step))
	w.Set(len(spec.acl))
	for _, a := range spec.acl {
		w.Simple("@" + a)
	}
	w.Set(len(spec.tips))
	for _, t := range spec.tips {
		w.BulkString(t)
	}
	w.Set(len(spec.keySpecs))
	for _, ks := range spec.keySpecs {
		writeKeySpec(w, ks)
	}
	if len(spec.subcommands) == 0 {
		w.Set(0) // Redis 7.0: an empty set, but an array when there are some
		return
	}
	w.Array(len(spec.subcommands))
	for _, sc := range spec.subcommands {
		writeCommandInfo(w, sc)
	}
}

// writeFlagSet writes a set of status strings (flags as COMMAND INFO and
// COMMAND DOCS show them).
func writeFlagSet(w *replyWriter, flags []string) {
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
}

func writeKeySpec(w *replyWriter, ks keySpec) {
	if ks.notes != "" {
		w.Map(4)
		w.BulkString("notes")
		w.BulkString(ks.notes)
	} else {
		w.Map(3)
	}
	w.BulkString("flags")
	writeFlagSet(w, ks.flags)
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	if ks.bsKeyword != "" {
		w.BulkString("keyword")
		w.BulkString("spec")
		w.Map(2)
		w.BulkString("keyword")
		w.BulkString(ks.bsKeyword)
		w.BulkString("startfrom")
		w.Int(int64(ks.bsStartFrom))
	} else {
		w.BulkString("index")
		w.BulkString("spec")
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(ks.bsIndex))
	}
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	if ks.fkKeyNum {
		w.BulkString("keynum")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("keynumidx")
		w.Int(int64(ks.keyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(ks.firstKey))
		w.BulkString("keystep")
		w.Int(int64(ks.keyStep))
	} else {
		w.BulkString("range")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("lastkey")
		w.Int(int64(ks.lastKey))
		w.BulkString("keystep")
		w.Int(int64(ks.keyStep))
		w.BulkString("limit")
		w.Int(int64(ks.limit))
	}
}

func writeCommandDocs(w *replyWriter, spec *commandSpec) {
	// Redis leaves out complexity when a command has none (PSYNC).
	n := 3
	for _, present := range []bool{spec.complexity != "", len(spec.docFlags) > 0, spec.deprecatedSince != "", spec.replacedBy != "",
		len(spec.history) > 0, len(spec.args) > 0, len(spec.subcommands) > 0} {
		if present {
			n++
		}
	}
	w.Map(n)
	w.BulkString("summary")
	w.BulkString(spec.summary)
	w.BulkString("since")
	w.BulkString(spec.since)
	w.BulkString("group")
	w.BulkString(spec.group)
	if spec.complexity != "" {
		w.BulkString("complexity")
		w.BulkString(spec.complexity)
	}
	if len(spec.docFlags) > 0 {
		w.BulkString("doc_flags")
		writeFlagSet(w, spec.docFlags)
	}
	if spec.deprecatedSince != "" {
		w.BulkString("deprecated_since")
		w.BulkString(spec.deprecatedSince)
	}
	if spec.replacedBy != "" {
		w.BulkString("replaced_by")
		w.BulkString(spec.replacedBy)
	}
	if len(spec.history) > 0 {
		// A set in RESP3, as Redis 7.0 sends it.
		w.BulkString("history")
		w.Set(len(spec.history))
		for _, h := range spec.history {
			w.Array(2)
			w.BulkString(h[0])
			w.BulkString(h[1])
		}
	}
	if len(spec.args) > 0 {
		w.BulkString("arguments")
		writeArgs(w, spec.args)
	}
	if len(spec.subcommands) > 0 {
		w.BulkString("subcommands")
		w.Map(len(spec.subcommands))
		for _, sc := range spec.subcommands {
			w.BulkString(sc.fullName())
			writeCommandDocs(w, sc)
		}
	}
}

func writeArgs(w *replyWriter, args []cmdArg) {
	w.Array(len(args))
	for _, a := range args {
		n := 2
		if a.typ == "key" {
			n++
		}
		for _, s := range []string{a.token, a.summary, a.since, a.deprecatedSince} {
			if s != "" {
				n++
			}
		}
		if len(a.flags) > 0 {
			n++
		}
		if len(a.args) > 0 {
			n++
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.name)
		w.BulkString("type")
		w.BulkString(a.typ)
		if a.typ == "key" {
			w.BulkString("key_spec_index")
			w.Int(int64(a.keySpec))
		}
		if a.token != "" {
			w.BulkString("token")
			w.BulkString(a.token)
		}
		if a.summary != "" {
			w.BulkString("summary")
			w.BulkString(a.summary)
		}
		if a.since != "" {
			w.BulkString("since")
			w.BulkString(a.since)
		}
		if a.deprecatedSince != "" {
			w.BulkString("deprecated_since")
			w.BulkString(a.deprecatedSince)
		}
		if len(a.flags) > 0 {
			w.BulkString("flags")
			writeFlagSet(w, a.flags)
		}
		if len(a.args) > 0 {
			w.BulkString("arguments")
			writeArgs(w, a.args)
		}
	}
}

func cmdCommand(ctx *cmdContext) {
	if len(ctx.args) > 1 {
		// a container with an unknown subcommand never gets here
		ctx.w.Error(errUnknownSubcommand("command", ctx.args[1]))
		return
	}
	cmds := ctx.c.s.commands
	ctx.w.Array(len(cmds))
	for _, spec := range cmds {
		writeCommandInfo(ctx.w, spec)
	}
}

func cmdCommandCount(ctx *cmdContext) { ctx.w.Int(int64(len(ctx.c.s.commands))) }

// lookupFull finds "name" or "container|sub".
func (s *Server) lookupFull(name string) *commandSpec {
	name = lower([]byte(name))
	parent, subName, isSub := strings.Cut(name, "|")
	spec := s.table[parent]
	if spec == nil || !isSub {
		return spec
	}
	for _, sc := range spec.subcommands {
		if sc.name == subName {
			return sc
		}
	}
	return nil
}

func cmdCommandInfo(ctx *cmdContext) {
	s := ctx.c.s
	if len(ctx.args) == 2 {
		cmdCommand(&cmdContext{c: ctx.c, args: ctx.args[:1], w: ctx.w})
		return
	}
	ctx.w.Array(len(ctx.args) - 2)
	for _, a := range ctx.args[2:] {
		if spec := s.lookupFull(string(a)); spec != nil {
			writeCommandInfo(ctx.w, spec)
		} else {
			ctx.w.NullArray()
		}
	}
}

func cmdCommandDocs(ctx *cmdContext) {
	s := ctx.c.s
	var specs []*commandSpec
	if len(ctx.args) == 2 {
		specs = s.commands
	} else {
		for _, a := range ctx.args[2:] {
			if spec := s.lookupFull(string(a)); spec != nil {
				specs = append(specs, spec)
			}
		}
	}
	ctx.w.Map(len(specs))
	for _, spec := range specs {
		ctx.w.BulkString(spec.fullName())
		writeCommandDocs(ctx.w, spec)
	}
}

func cmdCommandList(ctx *cmdContext) {
	s := ctx.c.s
	var names []string
	add := func(spec *commandSpec, ok func(*commandSpec) bool) {
		if ok(spec) {
			names = append(names, spec.fullName())
		}
		for _, sc := range spec.subcommands {
			if ok(sc) {
				names = append(names, sc.fullName())
			}
		}
	}
	var ok func(*commandSpec) bool
	switch {
	case len(ctx.args) == 2:
		ok = func(*commandSpec) bool { return true }
	case len(ctx.args) == 5 && argIs(ctx.args[2], "filterby"):
		v := string(ctx.args[4])
		switch lower(ctx.args[3]) {
		case "module":
			ok = func(*commandSpec) bool { return false }
		case "aclcat":
			ok = func(spec *commandSpec) bool {
				for _, a := range spec.acl {
					if nameIs(v, a) {
						return true
					}
				}
				return false
			}
		case "pattern":
			ok = func(spec *commandSpec) bool { return configMatch(v, spec.fullName()) }
		default:
			ctx.w.Error(errSyntax)
			return
		}
	default:
		ctx.w.Error(errSyntax)
		return
	}
	for _, spec := range s.commands {
		add(spec, ok)
	}
	ctx.w.Array(len(names))
	for _, n := range names {
		ctx.w.BulkString(n)
	}
}

// commandKeys returns the positions of the keys in args, from the key
// specs (or first/last/step when a command has none).
func commandKeys(spec *commandSpec, args [][]byte) []int {
	var out []int
	if len(spec.keySpecs) == 0 {
		if spec.firstKey == 0 {
			return nil
		}
		last := spec.lastKey
		if last < 0 {
			last += len(args)
		}
		for i := spec.firstKey; i <= last && i < len(args); i += max(spec.step, 1) {
			out = append(out, i)
		}
		return out
	}
	for _, ks := range spec.keySpecs {
		begin := ks.bsIndex
		if ks.bsKeyword != "" {
			begin = 0
			if ks.bsStartFrom >= 0 {
				for i := ks.bsStartFrom; i < len(args); i++ {
					if nameIs(string(args[i]), ks.bsKeyword) {
						begin = i + 1
						break
					}
				}
			} else {
				for i := len(args) + ks.bsStartFrom; i > 0; i-- {
					if nameIs(string(args[i]), ks.bsKeyword) {
						begin = i + 1
						break
					}
				}
			}
			if begin == 0 {
				continue
			}
		}
		if ks.fkKeyNum {
			n, ok := parseRedisInt(args[min(begin+ks.keyNumIdx, len(args)-1)])
			if !ok {
				continue
			}
			first := begin + ks.firstKey
			for i := 0; int64(i) < n && first+i*ks.keyStep < len(args); i++ {
				out = append(out, first+i*ks.keyStep)
			}
			continue
		}
		last := begin + ks.lastKey
		if ks.lastKey < 0 {
			last = len(args) + ks.lastKey
			if ks.limit > 1 {
				last = begin + (len(args)-begin)/ks.limit - 1
			}
		}
		step := max(ks.keyStep, 1)
		for i := begin; i <= last && i < len(args); i += step {
			out = append(out, i)
		}
	}
	return out
}

func cmdCommandGetKeys(ctx *cmdContext) {
	s := ctx.c.s
	args := ctx.args[2:]
	spec, _ := s.lookup(args)
	if spec == nil {
		ctx.w.Error(errInvalidCommand)
		return
	}
	if !spec.arityOK(len(args)) {
		ctx.w.Error(errInvalidCommandN)
		return
	}
	pos := commandKeys(spec, args)
	if len(pos) == 0 {
		ctx.w.Error(errNoKeyArguments)
		return
	}
	ctx.w.Array(len(pos))
	for _, p := range pos {
		ctx.w.Bulk(args[p])
	}
}

var commandHelp = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
	"HELP",
	"    Print this help.",
}

func cmdCommandHelp(ctx *cmdContext) { writeHelp(ctx.w, commandHelp) }
