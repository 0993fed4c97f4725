package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/eddy-streams/eddy/replication"
	"github.com/eddy-streams/eddy/stream"
	"github.com/tidwall/redcon"
)

// Version is Eddy's own version, reported as eddy_version in INFO.
const Version = "0.1.0"

// redisVersion is the Redis version Eddy answers as.
const redisVersion = "7.0.15"

// Server serves the RESP protocol on top of a stream.Engine.
type Server struct {
	logger *slog.Logger
	cfg    *LiveConfig
	engine *stream.Engine

	// live copies of settings read on hot paths
	nodeMaxEntries atomic.Int64
	nodeMaxBytes   atomic.Int64
	protoMaxBulk   atomic.Int64
	timeoutSecs    atomic.Int64
	requirePass    atomic.Pointer[string]
	maxClients     atomic.Int64
	databases      int

	table    map[string]*commandSpec // read-only after New
	commands []*commandSpec          // table order, for COMMAND
	cmdStats map[*commandSpec]*cmdStats

	listeners []net.Listener
	loop      *eventLoop // serves every client (loop.go)
	started   time.Time
	runID     string
	replID    string
	port      int

	mu       sync.Mutex
	clients  map[int64]*client // guarded by mu
	nextID   int64             // guarded by mu
	closing  bool              // guarded by mu
	detached sync.WaitGroup    // the event loop and the replication links

	// gate is held shared by every running command and exclusively by
	// shutdown, so shutdown waits for in-flight commands.
	gate    sync.RWMutex
	stopped bool // guarded by gate (write)

	// commitMu is held shared around every write transaction and
	// exclusively by EXEC with watched keys, so that all commits before
	// the EXEC have reported their changes (OnCommit) when it checks them.
	commitMu sync.RWMutex

	watch  watchRegistry
	blocks blockRegistry
	stats  serverStats

	shutdownReq  chan struct{}
	shutdownOnce sync.Once
	done         chan struct{} // closed when shutdown begins

	onAppend atomic.Pointer[func(key []byte)] // OnAppend's function, or nil

	repl replHub // replication (cmd_replication.go)
}

// Parts are what the server serves, opened and wired by the caller
// (cmd/eddy): the engine over the store, and the replication log that the
// engine's Options.OnApply feeds. The server installs its own hooks on the
// engine (SetOnCommit, SetLimits) and never sees the store.
type Parts struct {
	Engine  *stream.Engine
	ReplLog *replication.Log
}

// New binds cfg.Bind x cfg.Port to serve p.Engine. Serve then accepts
// clients. The caller closes the store once Serve has returned.
func New(cfg Config, p Parts, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if p.Engine == nil || p.ReplLog == nil {
		return nil, errors.New("server: New needs an engine and a replication log")
	}
	if cfg.Databases <= 0 {
		cfg.Databases = 16
	}
	s := &Server{
		logger:      logger,
		cfg:         NewLiveConfig(cfg),
		databases:   cfg.Databases,
		clients:     make(map[int64]*client),
		started:     time.Now(),
		runID:       randomHex(20),
		replID:      randomHex(20),
		shutdownReq: make(chan struct{}),
		done:        make(chan struct{}),
		repl:        replHub{log: p.ReplLog},
		engine:      p.Engine,
	}
	if err := s.applyLive(cfg); err != nil {
		return nil, err
	}
	s.watch.init()
	s.blocks.init()
	s.stats.init()
	s.buildTable(commandTable())

	eng := p.Engine
	eng.SetOnCommit(s.onCommit)
	eng.SetLimits(func() stream.NodeLimits {
		return stream.NodeLimits{MaxBytes: s.nodeMaxBytes.Load(), MaxEntries: s.nodeMaxEntries.Load()}
	})
	s.repl.primary = replication.NewPrimary(s.repl.log, eng, logger)
	s.repl.primary.OnAck(s.wakeWaiters)

	binds := cfg.Bind
	if len(binds) == 0 {
		binds = []string{"127.0.0.1"}
	}
	port := cfg.Port
	for _, b := range binds {
		ln, err := net.Listen("tcp", net.JoinHostPort(b, strconv.Itoa(port)))
		if err != nil {
			for _, l := range s.listeners {
				l.Close()
			}
			return nil, fmt.Errorf("listen on %s port %d: %w", b, port, err)
		}
		if port == 0 {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		s.listeners = append(s.listeners, ln)
	}
	s.port = port
	var err error
	if s.loop, err = newEventLoop(s, s.listeners); err != nil {
		for _, l := range s.listeners {
			l.Close()
		}
		return nil, err
	}
	return s, nil
}

// applyLive copies the settings read on hot paths, and hands the
// durability policy to the engine (storage decides what it means).
func (s *Server) applyLive(cfg Config) error {
	s.nodeMaxEntries.Store(cfg.StreamNodeMaxEntries)
	s.nodeMaxBytes.Store(cfg.StreamNodeMaxBytes)
	bulk := cfg.ProtoMaxBulkLen
	if bulk <= 0 {
		bulk = 512 << 20
	}
	s.protoMaxBulk.Store(bulk)
	s.timeoutSecs.Store(int64(cfg.Timeout))
	pass := cfg.RequirePass
	s.requirePass.Store(&pass)
	s.maxClients.Store(int64(cfg.MaxClients))
	if s.repl.log != nil {
		s.repl.log.SetBacklog(int(cfg.ReplBacklogSize))
	}
	if s.engine == nil {
		return nil
	}
	return s.engine.SetSyncMode(cfg.AppendFsync)
}

func (s *Server) maxBulkLen() int64 { return s.protoMaxBulk.Load() }

func (s *Server) idleTimeout() time.Duration {
	return time.Duration(s.timeoutSecs.Load()) * time.Second
}

func (s *Server) password() string { return *s.requirePass.Load() }

// Addr is the first listening address.
func (s *Server) Addr() net.Addr { return s.listeners[0].Addr() }

// Serve accepts clients until ctx is cancelled or SHUTDOWN is run, then
// stops accepting, lets in-flight commands finish, disconnects every
// client and stops replication. It returns nil after such a stop; the
// caller then closes the store.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	// Counted with the replication links: stop waits for it.
	s.detached.Add(1)
	go func() {
		defer s.detached.Done()
		if err := s.loop.run(); err != nil {
			errc <- err
		}
	}()
	expCtx, cancelExp := context.WithCancel(context.Background())
	expDone := make(chan struct{})
	go func() {
		defer close(expDone)
		s.expireLoop(expCtx)
	}()
	if v := s.cfg.Snapshot().ReplicaOf; v != "" {
		// The directive was checked when it was parsed.
		if host, port, err := splitHostPort(v); err == nil {
			s.follow(host, port)
		}
	}
	s.logger.Info("ready to accept connections", "addr", s.Addr().String())

	var serveErr error
	select {
	case <-ctx.Done():
	case <-s.shutdownReq:
	case err := <-errc:
		serveErr = err
	}
	cancelExp()
	<-expDone
	s.stop()
	return serveErr
}

// stop is the graceful shutdown: no new clients, in-flight commands
// finish, clients are disconnected (blocked ones woken first), the
// replica side ends: nothing of the server's reads or writes the store
// once it returns.
func (s *Server) stop() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.gate.Lock() // waits for running commands
	s.stopped = true
	s.gate.Unlock()
	close(s.done) // ends the replication links
	s.mu.Lock()
	for _, c := range s.clients {
		c.kill()
	}
	s.mu.Unlock()
	s.loop.stop()
	s.detached.Wait()
	s.stopReplication()
	s.logger.Info("server stopped")
}

// requestShutdown asks Serve to stop (SHUTDOWN).
func (s *Server) requestShutdown() {
	s.shutdownOnce.Do(func() { close(s.shutdownReq) })
}

// accept admits a connection unless maxclients is reached.
func (s *Server) accept(conn *loopConn) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	if int64(len(s.clients)) >= s.maxClients.Load() {
		s.mu.Unlock()
		s.stats.rejectedConns.Add(1)
		conn.WriteRaw([]byte("-" + errMaxClients + "\r\n")) // the event loop writes it
		return false
	}
	s.nextID++
	id := s.nextID
	c := newClient(s, conn, id)
	s.clients[id] = c
	s.mu.Unlock()
	c.authed.Store(s.password() == "")
	s.stats.connsReceived.Add(1)
	conn.c = c
	return true
}

// dropClient forgets a disconnected client.
func (s *Server) dropClient(c *client) {
	c.markClosed()
	s.blocks.remove(c)
	s.watch.unwatchAll(c)
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
}

// serveRESP runs cmd, and the rest of the pipeline behind it when they
// start a group of writes, for the event loop.
func (s *Server) serveRESP(conn *loopConn, cmd redcon.Command) {
	c := conn.c
	if s.startsGroup(c, conn, cmd) {
		s.servePipeline(c, conn, cmd, conn.ReadPipeline())
		return
	}
	s.dispatch(c, cmd.Args)
	c.flushTo(conn)
	if c.quitting {
		conn.Close()
		return
	}
	if c.repl != nil && c.repl.psync != nil {
		s.serveReplicaLink(c, conn)
	}
}

// flushTo hands the accumulated replies to the connection, which writes
// them at the end of the loop's turn.
func (c *client) flushTo(conn *loopConn) {
	if len(c.w.buf) == 0 {
		return
	}
	conn.WriteRaw(c.w.buf)
	c.s.stats.netOutput.Add(int64(len(c.w.buf)))
	if cap(c.w.buf) > 64<<10 {
		c.w.buf = nil
	} else {
		c.w.buf = c.w.buf[:0]
	}
}

// onCommit receives the keys changed by every write transaction.
func (s *Server) onCommit(changes []stream.Change) {
	s.watch.touch(changes)
	s.blocks.signal(changes)
	if fn := s.onAppend.Load(); fn != nil {
		for _, c := range changes {
			if c.Kind == stream.Appended && c.DB == 0 {
				(*fn)(c.Key)
			}
		}
	}
}

// OnAppend registers fn, called with the key of each stream of database
// 0 that a committed write (or a replicated batch) appended entries to:
// the NATS bridge's consumers wake on it. fn runs on the commit path, so
// it must only signal; it may keep key.
func (s *Server) OnAppend(fn func(key []byte)) { s.onAppend.Store(&fn) }

// expireLoop deletes expired keys in the background, as Redis's active
// expiry cycle does ten times a second.
func (s *Server) expireLoop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.gate.RLock()
		// A replica deletes nothing of its own: the primary's DELs come
		// through the link.
		if !s.stopped && !s.engine.Follower() {
			s.commitMu.RLock()
			n, err := s.engine.ExpireCycle(expireBatch)
			s.commitMu.RUnlock()
			if err != nil {
				s.logger.Warn("active expiry failed", "err", err)
			}
			s.stats.expiredKeys.Add(int64(n))
		}
		s.gate.RUnlock()
	}
}

// clientByID returns the connected client with id, or nil.
func (s *Server) clientByID(id int64) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

// clientList returns the connected clients in id order.
func (s *Server) clientList() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	sortClients(out)
	return out
}

func sortClients(cs []*client) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].id < cs[j-1].id; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// connFD returns the socket's file descriptor, for CLIENT LIST.
func connFD(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// expireBatch bounds the keys one active-expiry round deletes.
const expireBatch = 1000
