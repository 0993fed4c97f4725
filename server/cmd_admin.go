package server

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/storage"
)

func adminCommands() []*commandSpec {
	sub := func(name string, arity int, flags cmdFlags, h func(*cmdContext), summary, since, group string, acl ...string) *commandSpec {
		return &commandSpec{name: name, arity: arity, flags: flags, handler: h, summary: summary, since: since, group: group,
			complexity: "O(1)", acl: acl}
	}
	cfgFlags := flagAdmin | flagNoScript | flagLoading | flagStale | flagNoKeyspace
	cmdFlagsCommand := flagLoading | flagStale | flagNoKeyspace
	clusterSub := func(name string, arity int, flags cmdFlags) *commandSpec {
		return &commandSpec{name: name, arity: arity, flags: flagNoKeyspace | flags, handler: cmdClusterDisabled,
			summary: "Cluster subcommand " + name, since: "3.0.0", group: "cluster", complexity: "O(1)", acl: []string{"slow"}}
	}
	var cluster []*commandSpec
	// Flags as Redis 7.0 reports them; the summaries and arguments come
	// from command_meta.go.
	const (
		st    = flagStale
		adm   = flagAdmin | flagStale
		admNA = flagAdmin | flagStale | flagNoAsyncLoading
	)
	for _, c := range []struct {
		n string
		a int
		f cmdFlags
	}{{"addslots", -3, admNA}, {"addslotsrange", -4, admNA}, {"bumpepoch", 2, admNA}, {"count-failure-reports", 3, adm},
		{"countkeysinslot", 3, st}, {"delslots", -3, admNA}, {"delslotsrange", -4, admNA}, {"failover", -2, admNA},
		{"flushslots", 2, admNA}, {"forget", 3, admNA}, {"getkeysinslot", 4, st}, {"help", 2, flagLoading | st},
		{"info", 2, st}, {"keyslot", 3, st}, {"links", 2, st}, {"meet", -4, admNA}, {"myid", 2, st}, {"nodes", 2, st},
		{"replicas", 3, adm}, {"replicate", 3, admNA}, {"reset", -2, adm | flagNoScript}, {"saveconfig", 2, admNA},
		{"set-config-epoch", 3, admNA}, {"setslot", -4, admNA}, {"shards", 2, st}, {"slaves", 3, adm}, {"slots", 2, st}} {
		cluster = append(cluster, clusterSub(c.n, c.a, c.f))
	}
	return []*commandSpec{
		{name: "command", arity: -1, flags: cmdFlagsCommand, handler: cmdCommand,
			summary: "Get array of Redis command details", since: "2.8.13", group: "server",
			complexity: "O(N) where N is the total number of Redis commands", acl: []string{"slow", "connection"},
			tips: []string{"nondeterministic_output_order"},
			subcommands: []*commandSpec{
				sub("count", 2, cmdFlagsCommand, cmdCommandCount, "Get total number of Redis commands", "2.8.13", "server", "slow", "connection"),
				sub("info", -2, cmdFlagsCommand, cmdCommandInfo, "Get array of specific Redis command details, or all when no argument is given.", "2.8.13", "server", "slow", "connection"),
				sub("docs", -2, cmdFlagsCommand, cmdCommandDocs, "Get array of specific Redis command documentation", "7.0.0", "server", "slow", "connection"),
				sub("list", -2, cmdFlagsCommand, cmdCommandList, "Get an array of Redis command names", "7.0.0", "server", "slow", "connection"),
				sub("getkeys", -4, cmdFlagsCommand, cmdCommandGetKeys, "Extract keys given a full Redis command", "2.8.13", "server", "slow", "connection"),
				sub("help", 2, flagLoading|flagStale|flagNoKeyspace, cmdCommandHelp, "Show helpful text about the different subcommands", "5.0.0", "server", "slow", "connection"),
			}},
		{name: "config", arity: -2, summary: "A container for server configuration commands", since: "2.0.0", group: "server",
			complexity: "Depends on subcommand.", acl: []string{"slow"},
			subcommands: []*commandSpec{
				sub("get", -3, cfgFlags, cmdConfigGet, "Get the values of configuration parameters", "2.0.0", "server", "admin", "slow", "dangerous"),
				sub("set", -4, cfgFlags, cmdConfigSet, "Set configuration parameters to the given values", "2.0.0", "server", "admin", "slow", "dangerous"),
				sub("resetstat", 2, cfgFlags, cmdConfigResetStat, "Reset the stats returned by INFO", "2.0.0", "server", "admin", "slow", "dangerous"),
				sub("rewrite", 2, cfgFlags, cmdConfigRewrite, "Rewrite the configuration file with the in memory configuration", "2.8.0", "server", "admin", "slow", "dangerous"),
				sub("help", 2, flagLoading|flagStale|flagNoKeyspace, cmdConfigHelp, "Show helpful text about the different subcommands", "5.0.0", "server", "slow"),
			}},
		// INFO reads the keyspace (db0:keys=...), so it runs in a View.
		{name: "info", arity: -1, flags: flagLoading | flagStale, handler: cmdInfo,
			summary: "Get information and statistics about the server", since: "1.0.0", group: "server", complexity: "O(1)",
			acl: []string{"slow", "dangerous"}, tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			args: []cmdArg{{name: "section", typ: "string", flags: []string{"optional", "multiple"}}}},
		{name: "time", arity: 1, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdTime,
			summary: "Return the current server time", since: "2.6.0", group: "server", complexity: "O(1)",
			acl: []string{"fast"}, tips: []string{"nondeterministic_output"}},
		{name: "lastsave", arity: 1, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdLastSave,
			summary: "Get the UNIX time stamp of the last successful save to disk", since: "1.0.0", group: "server", complexity: "O(1)",
			acl: []string{"admin", "fast", "dangerous"}, tips: []string{"nondeterministic_output"}},
		{name: "save", arity: 1, flags: flagAdmin | flagNoScript | flagNoAsyncLoading | flagNoMulti | flagNoKeyspace, handler: cmdSave,
			summary: "Synchronously save the dataset to disk", since: "1.0.0", group: "server",
			complexity: "O(N) where N is the total number of keys in all databases", acl: []string{"admin", "slow", "dangerous"}},
		{name: "bgsave", arity: -1, flags: flagAdmin | flagNoScript | flagNoAsyncLoading | flagNoKeyspace, handler: cmdBgSave,
			summary: "Asynchronously save the dataset to disk", since: "1.0.0", group: "server", complexity: "O(1)",
			acl: []string{"admin", "slow", "dangerous"}},
		{name: "shutdown", arity: -1, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagNoMulti | flagAllowBusy | flagNoKeyspace,
			handler: cmdShutdown, summary: "Synchronously save the dataset to disk and then shut down the server", since: "1.0.0",
			group: "server", complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
			acl: []string{"admin", "slow", "dangerous"}},
		{name: "function", arity: -2, summary: "A container for function commands", since: "7.0.0", group: "scripting",
			complexity: "Depends on subcommand.", acl: []string{"slow"},
			subcommands: []*commandSpec{
				{name: "flush", arity: -2, flags: flagWrite | flagNoScript | flagNoKeyspace, handler: cmdFunctionFlush,
					summary: "Deleting all functions", since: "7.0.0", group: "scripting", complexity: "O(N) where N is the number of functions deleted",
					acl: []string{"write", "slow", "scripting"}, tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}},
			}},
		{name: "debug", arity: -2, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagNoKeyspace, handler: cmdDebug,
			summary: "A container for debugging commands", since: "1.0.0", group: "server", complexity: "Depends on subcommand.",
			acl: []string{"admin", "slow", "dangerous"}, docFlags: []string{"syscmd"}},
		{name: "cluster", arity: -2, summary: "A container for cluster commands", since: "3.0.0", group: "cluster",
			complexity: "Depends on subcommand.", acl: []string{"slow"}, subcommands: cluster},
	}
}

// --- COMMAND ---

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
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
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

func writeKeySpec(w *replyWriter, ks keySpec) {
	if ks.notes != "" {
		w.Map(4)
		w.BulkString("notes")
		w.BulkString(ks.notes)
	} else {
		w.Map(3)
	}
	w.BulkString("flags")
	w.Set(len(ks.flags))
	for _, f := range ks.flags {
		w.Simple(f)
	}
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
	n := 4
	for _, present := range []bool{len(spec.docFlags) > 0, spec.deprecatedSince != "", spec.replacedBy != "",
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
	w.BulkString("complexity")
	w.BulkString(spec.complexity)
	if len(spec.docFlags) > 0 {
		w.BulkString("doc_flags")
		w.Set(len(spec.docFlags))
		for _, f := range spec.docFlags {
			w.Simple(f)
		}
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
			w.Set(len(a.flags))
			for _, f := range a.flags {
				w.Simple(f)
			}
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
		ctx.w.Error(unknownSubcommandText("command", ctx.args[1]))
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
	name = strings.ToLower(name)
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
	case len(ctx.args) == 5 && strings.EqualFold(string(ctx.args[2]), "filterby"):
		v := string(ctx.args[4])
		switch strings.ToLower(string(ctx.args[3])) {
		case "module":
			ok = func(*commandSpec) bool { return false }
		case "aclcat":
			ok = func(spec *commandSpec) bool {
				for _, a := range spec.acl {
					if strings.EqualFold(a, v) {
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
					if strings.EqualFold(string(args[i]), ks.bsKeyword) {
						begin = i + 1
						break
					}
				}
			} else {
				for i := len(args) + ks.bsStartFrom; i > 0; i-- {
					if strings.EqualFold(string(args[i]), ks.bsKeyword) {
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
			n, ok := parseLL(args[min(begin+ks.keyNumIdx, len(args)-1)])
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
		ctx.w.Error("ERR Invalid command specified")
		return
	}
	if !spec.arityOK(len(args)) {
		ctx.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	pos := commandKeys(spec, args)
	if len(pos) == 0 {
		ctx.w.Error("ERR The command has no key arguments")
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

// --- CONFIG ---

func cmdConfigGet(ctx *cmdContext) {
	pats := make([]string, 0, len(ctx.args)-2)
	for _, a := range ctx.args[2:] {
		pats = append(pats, string(a))
	}
	kvs := ctx.c.s.cfg.Get(pats...)
	ctx.w.Map(len(kvs))
	for _, kv := range kvs {
		ctx.w.BulkString(kv[0])
		ctx.w.BulkString(kv[1])
	}
}

func cmdConfigSet(ctx *cmdContext) {
	s := ctx.c.s
	if len(ctx.args)%2 != 0 {
		ctx.w.Error(errWrongArity("config|set"))
		return
	}
	kv := make([]string, 0, len(ctx.args)-2)
	for _, a := range ctx.args[2:] {
		kv = append(kv, string(a))
	}
	if err := s.cfg.Set(kv...); err != nil {
		ctx.w.Error(err.Error())
		return
	}
	cfg := s.cfg.Snapshot()
	s.applyLive(cfg)
	if mode, err := storage.ParseSyncMode(cfg.AppendFsync); err == nil {
		s.db.SetSyncMode(mode)
	}
	ctx.w.Simple("OK")
}

func cmdConfigResetStat(ctx *cmdContext) {
	s := ctx.c.s
	s.stats.reset()
	for _, st := range s.cmdStats {
		st.calls.Store(0)
		st.usec.Store(0)
		st.rejected.Store(0)
		st.failed.Store(0)
	}
	ctx.w.Simple("OK")
}

func cmdConfigRewrite(ctx *cmdContext) {
	ctx.w.Error("ERR The server is running without a config file")
}

var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
	"HELP",
	"    Print this help.",
}

func cmdConfigHelp(ctx *cmdContext) { writeHelp(ctx.w, configHelp) }

// --- server ---

func cmdTime(ctx *cmdContext) {
	now := time.Now()
	ctx.w.Array(2)
	ctx.w.BulkString(strconv.FormatInt(now.Unix(), 10))
	ctx.w.BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

func cmdLastSave(ctx *cmdContext) { ctx.w.Int(ctx.c.s.started.Unix()) }

// cmdSave: every acknowledged write is already in the store.
func cmdSave(ctx *cmdContext) { ctx.w.Simple("OK") }

func cmdBgSave(ctx *cmdContext) {
	if len(ctx.args) > 2 || (len(ctx.args) == 2 && !strings.EqualFold(string(ctx.args[1]), "schedule")) {
		ctx.w.Error(errSyntax)
		return
	}
	ctx.w.Simple("Background saving started")
}

func cmdShutdown(ctx *cmdContext) {
	abort := false
	for _, a := range ctx.args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave", "save", "now", "force":
		case "abort":
			abort = true
		default:
			ctx.w.Error(errSyntax)
			return
		}
	}
	if abort {
		if len(ctx.args) > 2 {
			ctx.w.Error(errSyntax)
			return
		}
		ctx.w.Error("ERR No shutdown in progress.")
		return
	}
	ctx.c.s.logger.Info("SHUTDOWN requested", "client", ctx.c.id)
	ctx.c.quitting = true
	ctx.c.s.requestShutdown()
}

func cmdFunctionFlush(ctx *cmdContext) {
	if len(ctx.args) > 3 {
		ctx.w.Error(errSyntax)
		return
	}
	if len(ctx.args) == 3 {
		switch strings.ToLower(string(ctx.args[2])) {
		case "sync", "async":
		default:
			ctx.w.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
	}
	ctx.w.Simple("OK")
}

func cmdDebug(ctx *cmdContext) { ctx.w.Error(errDebugDisabled) }

func cmdClusterDisabled(ctx *cmdContext) { ctx.w.Error(errClusterDisabled) }

// sortedKeys returns m's keys in order, for stable INFO output.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
