package server

import (
	"sort"
	"strconv"
	"time"
)

// adminCommands are the server, scripting and cluster commands Eddy
// answers; flags as Redis 7.0 reports them, the documentation from
// command_meta.go.
func adminCommands() []*commandSpec {
	sub := func(name string, arity int, flags cmdFlags, h func(*cmdContext)) *commandSpec {
		return &commandSpec{name: name, arity: arity, flags: flags, handler: h}
	}
	cfgFlags := flagAdmin | flagNoScript | flagLoading | flagStale | flagNoKeyspace
	cmdFlagsCommand := flagLoading | flagStale | flagNoKeyspace
	helpFlags := flagLoading | flagStale | flagNoKeyspace
	var cluster []*commandSpec
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
		cluster = append(cluster, sub(c.n, c.a, flagNoKeyspace|c.f, cmdClusterDisabled))
	}
	return []*commandSpec{
		{name: "command", arity: -1, flags: cmdFlagsCommand, handler: cmdCommand,
			subcommands: []*commandSpec{
				sub("count", 2, cmdFlagsCommand, cmdCommandCount),
				sub("info", -2, cmdFlagsCommand, cmdCommandInfo),
				sub("docs", -2, cmdFlagsCommand, cmdCommandDocs),
				sub("list", -2, cmdFlagsCommand, cmdCommandList),
				sub("getkeys", -4, cmdFlagsCommand, cmdCommandGetKeys),
				sub("help", 2, helpFlags, cmdCommandHelp),
			}},
		{name: "config", arity: -2, subcommands: []*commandSpec{
			sub("get", -3, cfgFlags, cmdConfigGet),
			sub("set", -4, cfgFlags, cmdConfigSet),
			sub("resetstat", 2, cfgFlags, cmdConfigResetStat),
			sub("rewrite", 2, cfgFlags, cmdConfigRewrite),
			sub("help", 2, helpFlags, cmdConfigHelp),
		}},
		// INFO reads the keyspace (db0:keys=...), so it runs in a View.
		{name: "info", arity: -1, flags: flagLoading | flagStale | flagLoadingBare, handler: cmdInfo},
		{name: "time", arity: 1, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdTime},
		{name: "lastsave", arity: 1, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdLastSave},
		{name: "save", arity: 1, flags: flagAdmin | flagNoScript | flagNoAsyncLoading | flagNoMulti | flagNoKeyspace, handler: cmdSave},
		{name: "bgsave", arity: -1, flags: flagAdmin | flagNoScript | flagNoAsyncLoading | flagNoKeyspace, handler: cmdBgSave},
		{name: "shutdown", arity: -1, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagNoMulti | flagAllowBusy | flagNoKeyspace,
			handler: cmdShutdown},
		{name: "function", arity: -2, subcommands: []*commandSpec{
			sub("flush", -2, flagWrite|flagNoScript|flagNoKeyspace, cmdFunctionFlush),
		}},
		{name: "debug", arity: -2, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagNoKeyspace, handler: cmdDebug},
		{name: "cluster", arity: -2, subcommands: cluster},
	}
}

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
	if err := s.applyLive(s.cfg.Snapshot()); err != nil {
		ctx.w.Error(errorText(err))
		return
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
	ctx.w.Error(errNoConfigFile)
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
	if len(ctx.args) > 2 || (len(ctx.args) == 2 && !argIs(ctx.args[1], "schedule")) {
		ctx.w.Error(errSyntax)
		return
	}
	ctx.w.Simple("Background saving started")
}

func cmdShutdown(ctx *cmdContext) {
	abort := false
	for _, a := range ctx.args[1:] {
		switch lower(a) {
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
		ctx.w.Error(errNoShutdown)
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
		switch lower(ctx.args[2]) {
		case "sync", "async":
		default:
			ctx.w.Error(errFunctionFlushOpt)
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
