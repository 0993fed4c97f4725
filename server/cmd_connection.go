package server

import (
	"strconv"
	"strings"
	"time"
)

// connFlags are the flags of connection-management commands.
const connFlags = flagNoScript | flagLoading | flagStale | flagNoKeyspace

// connectionCommands are the connection group; their documentation comes
// from command_meta.go, but for CLIENT SETINFO, which Redis 7.0 lacks.
func connectionCommands() []*commandSpec {
	return []*commandSpec{
		{name: "ping", arity: -1, flags: flagFast | flagNoKeyspace, handler: cmdPing},
		{name: "echo", arity: 2, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdEcho},
		{name: "quit", arity: -1, flags: flagAllowBusy | flagNoAuth | flagNoKeyspace | flagNoQueue | flagAnswerFirst | flagLoading | flagStale | flagFast | flagNoScript,
			handler: cmdQuit},
		{name: "auth", arity: -2, flags: connFlags | flagFast | flagNoAuth | flagAllowBusy, handler: cmdAuth},
		{name: "hello", arity: -1, flags: connFlags | flagFast | flagNoAuth | flagAllowBusy, handler: cmdHello},
		{name: "select", arity: 2, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdSelect},
		{name: "reset", arity: 1, flags: connFlags | flagFast | flagNoAuth | flagAllowBusy | flagNoQueue, handler: cmdReset},
		{name: "client", arity: -2, subcommands: []*commandSpec{
			{name: "id", arity: 2, flags: connFlags, handler: cmdClientID},
			{name: "getname", arity: 2, flags: connFlags, handler: cmdClientGetName},
			{name: "setname", arity: 3, flags: connFlags, handler: cmdClientSetName},
			{name: "list", arity: -2, flags: connFlags | flagAdmin, handler: cmdClientList},
			{name: "info", arity: 2, flags: connFlags, handler: cmdClientInfo},
			{name: "kill", arity: -3, flags: connFlags | flagAdmin, handler: cmdClientKill},
			{name: "unblock", arity: -3, flags: connFlags | flagAdmin, handler: cmdClientUnblock},
			// SETINFO is Redis 7.2's; go-redis v9 sends it on connect.
			{name: "setinfo", arity: 4, flags: connFlags | flagLoading | flagStale, handler: cmdClientSetInfo,
				commandMeta: commandMeta{summary: "Set client or connection specific info", since: "7.2.0",
					group: "connection", complexity: "O(1)", acl: []string{"slow", "connection"}}},
			{name: "no-evict", arity: 3, flags: connFlags | flagAdmin, handler: cmdClientOnOff},
			{name: "help", arity: 2, flags: flagLoading | flagStale | flagNoKeyspace, handler: cmdClientHelp},
		}},
	}
}

func cmdPing(ctx *cmdContext) {
	if len(ctx.args) > 2 {
		ctx.w.Error(errWrongArity("ping"))
		return
	}
	if len(ctx.args) == 2 {
		ctx.w.Bulk(ctx.args[1])
		return
	}
	ctx.w.Simple("PONG")
}

func cmdEcho(ctx *cmdContext) { ctx.w.Bulk(ctx.args[1]) }

func cmdQuit(ctx *cmdContext) {
	ctx.w.Simple("OK")
	ctx.c.quitting = true
}

func cmdReset(ctx *cmdContext) {
	c := ctx.c
	c.multi = nil
	c.setMultiCount(-1)
	c.s.watch.unwatchAll(c)
	c.setDB(0)
	c.setProto(2)
	c.setName("")
	c.authed.Store(c.s.password() == "")
	ctx.w.Simple("RESET")
}

// checkPassword is the default user's password check.
func (s *Server) checkPassword(user, pass []byte) (ok bool, errText string) {
	want := s.password()
	if user != nil && string(user) != "default" {
		return false, errWrongPass
	}
	if want == "" {
		if user == nil {
			return false, errAuthNotSet
		}
		return true, ""
	}
	if string(pass) != want {
		return false, errWrongPass
	}
	return true, ""
}

func cmdAuth(ctx *cmdContext) {
	var user, pass []byte
	switch len(ctx.args) {
	case 2:
		pass = ctx.args[1]
	case 3:
		user, pass = ctx.args[1], ctx.args[2]
	default:
		ctx.w.Error(errSyntax)
		return
	}
	ok, text := ctx.c.s.checkPassword(user, pass)
	if !ok {
		ctx.w.Error(text)
		return
	}
	ctx.c.authed.Store(true)
	ctx.w.Simple("OK")
}

func cmdHello(ctx *cmdContext) {
	c := ctx.c
	args := ctx.args
	ver := int64(0)
	next := 1
	if len(args) >= 2 {
		v, ok := parseRedisInt(args[1])
		if !ok {
			ctx.w.Error(errProtoVersion)
			return
		}
		if v < 2 || v > 3 {
			ctx.w.Error(errNoProto)
			return
		}
		ver = v
		next = 2
	}
	var user, pass, name []byte
	setName := false
	for j := next; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := lower(args[j])
		switch {
		case opt == "auth" && more >= 2:
			user, pass = args[j+1], args[j+2]
			j += 2
		case opt == "setname" && more >= 1:
			name = args[j+1]
			if !validClientName(name) {
				ctx.w.Error(errClientName)
				return
			}
			setName = true
			j++
		default:
			ctx.w.Error(errHelloSyntax(args[j]))
			return
		}
	}
	if user != nil {
		ok, text := c.s.checkPassword(user, pass)
		if !ok {
			ctx.w.Error(text)
			return
		}
		c.authed.Store(true)
	}
	if !c.isAuthed() {
		ctx.w.Error(errHelloNoAuth)
		return
	}
	if setName {
		c.setName(string(name))
	}
	if ver != 0 {
		c.setProto(int(ver))
	}
	w := ctx.w
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(redisVersion)
	w.BulkString("proto")
	w.Int(int64(w.proto))
	w.BulkString("id")
	w.Int(c.id)
	w.BulkString("mode")
	w.BulkString("standalone")
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(0)
}

func cmdSelect(ctx *cmdContext) {
	n, ok := parseRedisInt(ctx.args[1])
	if !ok || n < -1<<31 || n > 1<<31-1 {
		ctx.w.Error(errValueNotInteger)
		return
	}
	if n < 0 || n >= int64(ctx.c.s.databases) {
		ctx.w.Error(errDBIndex)
		return
	}
	ctx.c.setDB(int(n))
	ctx.w.Simple("OK")
}

func cmdClientID(ctx *cmdContext) { ctx.w.Int(ctx.c.id) }

func cmdClientGetName(ctx *cmdContext) {
	if n := ctx.c.getName(); n != "" {
		ctx.w.BulkString(n)
		return
	}
	ctx.w.Null()
}

func cmdClientSetName(ctx *cmdContext) {
	if !validClientName(ctx.args[2]) {
		ctx.w.Error(errClientName)
		return
	}
	ctx.c.setName(string(ctx.args[2]))
	ctx.w.Simple("OK")
}

func cmdClientSetInfo(ctx *cmdContext) {
	attr := lower(ctx.args[2])
	val := string(ctx.args[3])
	if attr != "lib-name" && attr != "lib-ver" {
		ctx.w.Error(errUnrecognizedOption(ctx.args[2]))
		return
	}
	for i := 0; i < len(val); i++ {
		if val[i] < '!' || val[i] > '~' {
			ctx.w.Error(errClientAttr(attr))
			return
		}
	}
	c := ctx.c
	c.mu.Lock()
	if attr == "lib-name" {
		c.libName = val
	} else {
		c.libVer = val
	}
	c.mu.Unlock()
	ctx.w.Simple("OK")
}

func cmdClientOnOff(ctx *cmdContext) {
	switch lower(ctx.args[2]) {
	case "on", "off":
		ctx.w.Simple("OK")
	default:
		ctx.w.Error(errSyntax)
	}
}

func cmdClientList(ctx *cmdContext) {
	var filter map[int64]bool
	if len(ctx.args) > 2 {
		opt := lower(ctx.args[2])
		switch {
		case opt == "type" && len(ctx.args) == 4:
			switch t := lower(ctx.args[3]); t {
			case "normal":
			case "master", "replica", "slave", "pubsub":
				filter = map[int64]bool{}
			default:
				ctx.w.Error(errUnknownClientType(ctx.args[3]))
				return
			}
		case opt == "id" && len(ctx.args) >= 4:
			filter = map[int64]bool{}
			for _, a := range ctx.args[3:] {
				id, ok := parseRedisInt(a)
				if !ok || id <= 0 {
					ctx.w.Error(errInvalidClientID)
					return
				}
				filter[id] = true
			}
		default:
			ctx.w.Error(errSyntax)
			return
		}
	}
	now := time.Now()
	var b strings.Builder
	for _, c := range ctx.c.s.clientList() {
		if filter != nil && !filter[c.id] {
			continue
		}
		b.WriteString(c.info(now))
		b.WriteByte('\n')
	}
	ctx.w.Verbatim(b.String())
}

func cmdClientInfo(ctx *cmdContext) {
	ctx.w.Verbatim(ctx.c.info(time.Now()) + "\n")
}

// cmdClientKill is both forms: CLIENT KILL addr:port (OK or an error) and
// CLIENT KILL <filter> <value> ... (the number killed).
func cmdClientKill(ctx *cmdContext) {
	s := ctx.c.s
	args := ctx.args
	if len(args) == 3 {
		for _, c := range s.clientList() {
			if c.addr == string(args[2]) {
				s.killClient(ctx.c, c)
				ctx.w.Simple("OK")
				return
			}
		}
		ctx.w.Error(errNoSuchClient)
		return
	}
	if len(args)%2 != 0 {
		ctx.w.Error(errSyntax)
		return
	}
	var id int64
	var addr, laddr, user string
	var typ string
	skipMe := true
	for i := 2; i < len(args); i += 2 {
		v := string(args[i+1])
		switch lower(args[i]) {
		case "id":
			n, ok := parseRedisInt(args[i+1])
			if !ok || n <= 0 {
				ctx.w.Error(errClientIDPositive)
				return
			}
			id = n
		case "type":
			typ = lower(args[i+1])
			switch typ {
			case "normal", "master", "replica", "slave", "pubsub":
			default:
				ctx.w.Error(errUnknownClientType(args[i+1]))
				return
			}
		case "addr":
			addr = v
		case "laddr":
			laddr = v
		case "user":
			user = v
			if user != "default" {
				ctx.w.Error(errNoSuchUser(args[i+1]))
				return
			}
		case "skipme":
			switch lower(args[i+1]) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				ctx.w.Error(errSyntax)
				return
			}
		default:
			ctx.w.Error(errSyntax)
			return
		}
	}
	killed := int64(0)
	for _, c := range s.clientList() {
		if id != 0 && c.id != id || addr != "" && c.addr != addr || laddr != "" && c.laddr != laddr {
			continue
		}
		if typ != "" && typ != "normal" {
			continue
		}
		if skipMe && c == ctx.c {
			continue
		}
		s.killClient(ctx.c, c)
		killed++
	}
	ctx.w.Int(killed)
}

// killClient closes c; the caller itself is closed after its reply.
func (s *Server) killClient(self, c *client) {
	if c == self {
		self.quitting = true
		return
	}
	c.kill()
}

func cmdClientUnblock(ctx *cmdContext) {
	args := ctx.args
	id, ok := parseRedisInt(args[2])
	if !ok {
		ctx.w.Error(errValueNotInteger)
		return
	}
	withError := false
	if len(args) == 4 {
		switch lower(args[3]) {
		case "timeout":
		case "error":
			withError = true
		default:
			ctx.w.Error(errUnblockReason)
			return
		}
	} else if len(args) > 4 {
		ctx.w.Error(errSyntax)
		return
	}
	c := ctx.c.s.clientByID(id)
	if c == nil || !ctx.c.s.unblock(c, withError) {
		ctx.w.Int(0)
		return
	}
	ctx.w.Int(1)
}

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"    * ID <client-id>",
	"      Kill connections by client id.",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Print this help.",
}

func cmdClientHelp(ctx *cmdContext) { writeHelp(ctx.w, clientHelp) }

// writeHelp writes a HELP reply: status lines.
func writeHelp(w *replyWriter, lines []string) {
	w.Array(len(lines))
	for _, l := range lines {
		w.Simple(l)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
