package server

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/tidwall/redcon"
)

// client is one connection's state.
//
// Fields marked "owner" are touched only by the goroutine serving the
// connection. Fields under mu are written by the owner while holding mu
// and read by others (CLIENT LIST, INFO) under mu; the owner reads them
// without it.
type client struct {
	s       *Server
	id      int64
	conn    *loopConn
	addr    string
	laddr   string
	fd      int // guarded by mu: a client leaving the event loop gets a new one
	created time.Time

	w           replyWriter // owner
	lastCommand lastCommand // owner: see lookupFor

	authed atomic.Bool // AUTH done (or no password when connected)
	// blockedNow mirrors the blocked state for the reading goroutine.
	blockedNow atomic.Bool

	multi   *multiState    // owner: non-nil between MULTI and EXEC/DISCARD
	repl    *replConn      // owner: what REPLCONF and PSYNC said (cmd_replication.go)
	watched []watchedEntry // owner
	dirty   atomic.Bool    // a watched key changed (set by commits)

	mu         sync.Mutex
	name       string    // guarded by mu
	db         int       // guarded by mu
	proto      int       // guarded by mu
	lastCmd    string    // guarded by mu: full name of the last command
	lastActive time.Time // guarded by mu
	libName    string    // guarded by mu
	libVer     string    // guarded by mu
	inMulti    int       // guarded by mu: queued commands, -1 outside MULTI
	blocked    bool      // guarded by mu

	// Blocking (see blocking.go).
	unblockCh chan unblockRequest // CLIENT UNBLOCK
	pending   *pendingBlock       // owner: the blocked command, if any
	closeOnce sync.Once
	closed    chan struct{}     // closed when the connection is gone
	quitting  bool              // owner: close after the reply
	iters     *stream.ReadCache // owner: the event loop's while it serves the client (inLoop)
	// loopNotify, set while the client is in the event loop, hands its
	// blocked command to the loop to retry (notifyBlocked).
	loopNotify atomic.Pointer[func()]

	// Per-command scratch (dispatch.go), owner only.
	cmd     cmdContext             // the running command's context
	write   writeCall              // the write command Engine.Update runs
	writeFn func(*stream.Tx) error // runWrite, bound once

	// Pipeline scratch (pipeline.go), owner only.
	pipe       []redcon.Command // the pipeline being served
	groupSpecs []*commandSpec   // specs of the group being formed
	backlog    []redcon.Command // commands behind the one running, held if it blocks
	part       [1]groupPart     // runGroup's one part
}

// multiState is a transaction being queued.
type multiState struct {
	cmds    []queuedCmd
	aborted bool // a command was refused while queueing: EXEC replies EXECABORT
}

type queuedCmd struct {
	spec *commandSpec
	args [][]byte
}

// watchedEntry is a key under WATCH and whether it existed then.
type watchedEntry struct {
	db      int
	key     string
	existed bool
}

func newClient(s *Server, conn *loopConn, id int64) *client {
	c := &client{
		s:          s,
		id:         id,
		conn:       conn,
		addr:       conn.addr,
		laddr:      conn.laddr,
		fd:         conn.fd,
		created:    time.Now(),
		proto:      2,
		inMulti:    -1,
		lastCmd:    "NULL",
		unblockCh:  make(chan unblockRequest, 1),
		closed:     make(chan struct{}),
		lastActive: time.Now(),
	}
	c.w.proto = 2
	c.w.stats = &s.stats
	return c
}

func (c *client) isAuthed() bool  { return c.authed.Load() }
func (c *client) isBlocked() bool { return c.blockedNow.Load() }

func (c *client) setDB(db int) {
	c.mu.Lock()
	c.db = db
	c.mu.Unlock()
}

func (c *client) setProto(p int) {
	c.mu.Lock()
	c.proto = p
	c.mu.Unlock()
	c.w.proto = p
}

func (c *client) setName(n string) {
	c.mu.Lock()
	c.name = n
	c.mu.Unlock()
}

func (c *client) getName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// noteCommand records the command being run, for CLIENT LIST.
func (c *client) noteCommand(fullname string, now time.Time) {
	c.mu.Lock()
	c.lastCmd = fullname
	c.lastActive = now
	c.mu.Unlock()
}

func (c *client) setMultiCount(n int) {
	c.mu.Lock()
	c.inMulti = n
	c.mu.Unlock()
}

// markClosed records that the connection is gone; it runs once.
func (c *client) markClosed() {
	c.closeOnce.Do(func() { close(c.closed) })
}

// kill closes the connection from any goroutine; the owner notices when
// its next read fails.
func (c *client) kill() { c.conn.kill() }

// info formats the client as one CLIENT LIST line (Redis 7.0 fields, no
// trailing newline).
func (c *client) info(now time.Time) string {
	c.mu.Lock()
	name, db, proto, cmd, last := c.name, c.db, c.proto, c.lastCmd, c.lastActive
	multi, blocked, fd := c.inMulti, c.blocked, c.fd
	c.mu.Unlock()
	flags := ""
	if multi >= 0 {
		flags += "x"
	}
	if blocked {
		flags += "b"
	}
	if flags == "" {
		flags = "N"
	}
	var b strings.Builder
	b.Grow(256)
	b.WriteString("id=")
	b.WriteString(strconv.FormatInt(c.id, 10))
	b.WriteString(" addr=" + c.addr)
	b.WriteString(" laddr=" + c.laddr)
	b.WriteString(" fd=" + strconv.Itoa(fd))
	b.WriteString(" name=" + name)
	b.WriteString(" age=" + strconv.FormatInt(int64(now.Sub(c.created)/time.Second), 10))
	b.WriteString(" idle=" + strconv.FormatInt(int64(now.Sub(last)/time.Second), 10))
	b.WriteString(" flags=" + flags)
	b.WriteString(" db=" + strconv.Itoa(db))
	b.WriteString(" sub=0 psub=0 ssub=0")
	b.WriteString(" multi=" + strconv.Itoa(multi))
	b.WriteString(" qbuf=0 qbuf-free=20474 argv-mem=0 multi-mem=0 rbs=16384 rbp=16384 obl=0 oll=0 omem=0 tot-mem=37658")
	b.WriteString(" events=r")
	b.WriteString(" cmd=" + cmd)
	b.WriteString(" user=default redir=-1")
	b.WriteString(" resp=" + strconv.Itoa(proto))
	return b.String()
}

// validClientName is Redis's rule: printable ASCII without spaces.
func validClientName(n []byte) bool {
	for _, ch := range n {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// inLoop reports whether the event loop serves c (it has not left it).
func (c *client) inLoop() bool { return c.iters != nil }
