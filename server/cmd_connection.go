package server

import (
	"strconv"
	"strings"
	"time"
)

// connFlags are the flags of connection-management commands.
const connFlags = flagNoScript | flagLoading | flagStale | flagNoKeyspace

func connectionCommands() []*commandSpec {
	conn := []string{"slow", "connection"}
	adminConn := []string{"admin", "slow", "dangerous", "connection"}
	return []*commandSpec{
		{name: "ping", arity: -1, flags: flagFast | flagNoKeyspace, handler: cmdPing,
			summary: "Ping the server", since: "1.0.0", group: "connection", complexity: "O(1)",
			acl: []string{"fast", "connection"}, tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			args: []cmdArg{{name: "message", typ: "string", flags: []string{"optional"}}}},
		{name: "echo", arity: 2, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdEcho,
			summary: "Echo the given string", since: "1.0.0", group: "connection", complexity: "O(1)",
			acl:  []string{"fast", "connection"},
			args: []cmdArg{{name: "message", typ: "string"}}},
		{name: "quit", arity: -1, flags: flagAllowBusy | flagNoAuth | flagNoKeyspace | flagNoQueue | flagAnswerFirst | flagLoading | flagStale | flagFast | flagNoScript,
			handler: cmdQuit, summary: "Close the connection", since: "1.0.0", group: "connection", complexity: "O(1)",
			acl: []string{"fast", "connection"}},
		{name: "auth", arity: -2, flags: connFlags | flagFast | flagNoAuth | flagAllowBusy,
			handler: cmdAuth, summary: "Authenticate to the server", since: "1.0.0", group: "connection",
			complexity: "O(N) where N is the number of passwords defined for the user", acl: []string{"fast", "connection"},
			args: []cmdArg{{name: "username", typ: "string", since: "6.0.0", flags: []string{"optional"}}, {name: "password", typ: "string"}}},
		{name: "hello", arity: -1, flags: connFlags | flagFast | flagNoAuth | flagAllowBusy,
			handler: cmdHello, summary: "Handshake with Redis", since: "6.0.0", group: "connection", complexity: "O(1)",
			acl: []string{"fast", "connection"}},
		{name: "select", arity: 2, flags: flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdSelect,
			summary: "Change the selected database for the current connection", since: "1.0.0", group: "connection",
			complexity: "O(1)", acl: []string{"fast", "connection"},
			args: []cmdArg{{name: "index", typ: "integer"}}},
		{name: "reset", arity: 1, flags: connFlags | flagFast | flagNoAuth | flagAllowBusy | flagNoQueue, handler: cmdReset,
			summary: "Reset the connection", since: "6.2.0", group: "connection", complexity: "O(1)",
			acl: []string{"fast", "connection"}},
		{name: "client", arity: -2, summary: "A container for client connection commands", since: "2.4.0", group: "connection",
			complexity: "Depends on subcommand.", acl: []string{"slow"},
			subcommands: []*commandSpec{
				{name: "id", arity: 2, flags: connFlags, handler: cmdClientID, acl: conn,
					summary: "Returns the client ID for the current connection", since: "5.0.0", group: "connection", complexity: "O(1)"},
				{name: "getname", arity: 2, flags: connFlags, handler: cmdClientGetName, acl: conn,
					summary: "Get the current connection name", since: "2.6.9", group: "connection", complexity: "O(1)"},
				{name: "setname", arity: 3, flags: connFlags, handler: cmdClientSetName, acl: conn,
					summary: "Set the current connection name", since: "2.6.9", group: "connection", complexity: "O(1)",
					args: []cmdArg{{name: "connection-name", typ: "string"}}},
				{name: "list", arity: -2, flags: connFlags | flagAdmin, handler: cmdClientList, acl: adminConn,
					tips:    []string{"nondeterministic_output"},
					summary: "Get the list of client connections", since: "2.4.0", group: "connection",
					complexity: "O(N) where N is the number of client connections"},
				{name: "info", arity: 2, flags: connFlags, handler: cmdClientInfo, acl: conn,
					tips:    []string{"nondeterministic_output"},
					summary: "Returns information about the current client connection.", since: "6.2.0", group: "connection", complexity: "O(1)"},
				{name: "kill", arity: -3, flags: connFlags | flagAdmin, handler: cmdClientKill, acl: adminConn,
					summary: "Kill the connection of a client", since: "2.4.0", group: "connection",
					complexity: "O(N) where N is the number of client connections"},
				{name: "unblock", arity: -3, flags: connFlags | flagAdmin, handler: cmdClientUnblock, acl: adminConn,
					summary: "Unblock a client blocked in a blocking command from a different connection", since: "5.0.0",
					group: "connection", complexity: "O(log N) where N is the number of client connections"},
				// SETINFO is Redis 7.2's; go-redis v9 sends it on connect.
				{name: "setinfo", arity: 4, flags: connFlags | flagLoading | flagStale, handler: cmdClientSetInfo, acl: conn,
					summary: "Set client or connection specific info", since: "7.2.0", group: "connection", complexity: "O(1)"},
				{name: "no-evict", arity: 3, flags: connFlags | flagAdmin, handler: cmdClientOnOff, acl: adminConn,
					summary: "Set client eviction mode for the current connection", since: "7.0.0", group: "connection", complexity: "O(1)"},
				{name: "help", arity: 2, flags: flagLoading | flagStale | flagNoKeyspace, handler: cmdClientHelp, acl: conn,
					summary: "Show helpful text about the different subcommands", since: "5.0.0", group: "connection", complexity: "O(1)"},
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
		v, ok := parseLL(args[1])
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
		opt := strings.ToLower(string(args[j]))
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
			ctx.w.Error(errHelloSyntaxPrefix + cString(args[j]) + "'")
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
	n, ok := parseLL(ctx.args[1])
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
	attr := strings.ToLower(string(ctx.args[2]))
	val := string(ctx.args[3])
	if attr != "lib-name" && attr != "lib-ver" {
		ctx.w.Error("ERR Unrecognized option '" + cString(ctx.args[2]) + "'")
		return
	}
	for i := 0; i < len(val); i++ {
		if val[i] < '!' || val[i] > '~' {
			ctx.w.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.")
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
	switch strings.ToLower(string(ctx.args[2])) {
	case "on", "off":
		ctx.w.Simple("OK")
	default:
		ctx.w.Error(errSyntax)
	}
}

func cmdClientList(ctx *cmdContext) {
	var filter map[int64]bool
	if len(ctx.args) > 2 {
		opt := strings.ToLower(string(ctx.args[2]))
		switch {
		case opt == "type" && len(ctx.args) == 4:
			switch t := strings.ToLower(string(ctx.args[3])); t {
			case "normal":
			case "master", "replica", "slave", "pubsub":
				filter = map[int64]bool{}
			default:
				ctx.w.Error("ERR Unknown client type '" + cString(ctx.args[3]) + "'")
				return
			}
		case opt == "id" && len(ctx.args) >= 4:
			filter = map[int64]bool{}
			for _, a := range ctx.args[3:] {
				id, ok := parseLL(a)
				if !ok || id <= 0 {
					ctx.w.Error("ERR Invalid client ID")
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
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, ok := parseLL(args[i+1])
			if !ok || n <= 0 {
				ctx.w.Error(errClientIDPositive)
				return
			}
			id = n
		case "type":
			typ = strings.ToLower(v)
			switch typ {
			case "normal", "master", "replica", "slave", "pubsub":
			default:
				ctx.w.Error("ERR Unknown client type '" + v + "'")
				return
			}
		case "addr":
			addr = v
		case "laddr":
			laddr = v
		case "user":
			user = v
			if user != "default" {
				ctx.w.Error("ERR No such user '" + v + "'")
				return
			}
		case "skipme":
			switch strings.ToLower(v) {
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
	id, ok := parseLL(args[2])
	if !ok {
		ctx.w.Error(errValueNotInteger)
		return
	}
	withError := false
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
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
