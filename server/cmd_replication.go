package server

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/eddy-streams/eddy/replication"
	"github.com/eddy-streams/eddy/stream"
)

// Replication commands: REPLICAOF/SLAVEOF, ROLE, WAIT, and the two a
// replica sends on its link, REPLCONF and PSYNC (package replication
// draws the handshake). PSYNC takes the connection out of redcon and
// hands it to the replication package, which speaks frames on it.

func replicationCommands() []*commandSpec {
	return []*commandSpec{
		{name: "replicaof", arity: 3, flags: flagAdmin | flagNoScript | flagStale | flagNoAsyncLoading | flagNoKeyspace, handler: cmdReplicaOf},
		{name: "slaveof", arity: 3, flags: flagAdmin | flagNoScript | flagStale | flagNoAsyncLoading | flagNoKeyspace, handler: cmdReplicaOf},
		{name: "role", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoKeyspace, handler: cmdRole},
		{name: "wait", arity: 3, flags: flagNoScript | flagNoKeyspace, handler: cmdWait},
		{name: "replconf", arity: -1, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagAllowBusy | flagNoKeyspace, handler: cmdReplConf},
		{name: "psync", arity: -3, flags: flagAdmin | flagNoScript | flagNoAsyncLoading | flagNoMulti | flagNoKeyspace, handler: cmdPSync},
	}
}

// replHub is the server's replication state: the log (fed by the
// engine's OnApply), the primary side serving replicas, and the replica
// side while this server follows a primary.
type replHub struct {
	log     *replication.Log
	primary *replication.Primary

	// switchMu serialises REPLICAOF, promotion and shutdown. They stop
	// the replica side, which waits for its goroutine, without mu: a
	// command that reads the status (INFO) must never wait for that
	// goroutine, which may itself be waiting for commands (loadMu).
	switchMu sync.Mutex
	mu       sync.Mutex
	replica  *replication.Replica // guarded by mu: nil on a primary
	host     string               // guarded by mu
	port     int                  // guarded by mu

	// loading is set while the replica side loads a full sync, which
	// holds the engine locked: commands are answered -LOADING instead of
	// waiting for the whole load (dispatch). loadMu is held shared, on a
	// replica, by a command from its loading check until it ends, and
	// exclusively by the replica once it set loading and before it locks
	// the engine: a command that passed the check before loading was set
	// has finished by then, so none waits for the load.
	loading atomic.Bool
	loadMu  sync.RWMutex
}

// setLoading is the replica side's Loading hook.
func (s *Server) setLoading(on bool) {
	h := &s.repl
	h.loading.Store(on)
	if on {
		h.loadMu.Lock()
		//lint:ignore SA2001 the wait for the running commands is the point
		h.loadMu.Unlock()
	}
}

// replConn is what REPLCONF told about a connection that will send
// PSYNC.
type replConn struct {
	port  int
	proto bool // REPLCONF eddy-proto agreed
	crc   bool // and its feature "crc"
	psync *replication.PSync
}

// follow makes the server a replica of host:port (from the replicaof
// directive or REPLICAOF).
func (s *Server) follow(host string, port int) {
	h := &s.repl
	h.switchMu.Lock()
	defer h.switchMu.Unlock()
	h.mu.Lock()
	old := h.replica
	h.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	s.engine.SetFollower(true)
	s.unblockAllChanged()
	r := replication.StartReplica(replication.ReplicaConfig{
		Host: host, Port: port, ListeningPort: s.port,
		Engine: s.engine, Log: h.log, Logger: s.logger,
		Auth: func() (string, string) {
			c := s.cfg.Snapshot()
			return c.MasterUser, c.MasterAuth
		},
		Loading: s.setLoading,
	})
	h.mu.Lock()
	h.replica, h.host, h.port = r, host, port
	h.mu.Unlock()
	s.logger.Info("following a primary", "primary", net.JoinHostPort(host, strconv.Itoa(port)))
}

// promote stops following (REPLICAOF NO ONE). The server starts a new
// history where the primary's ends and keeps that one as its previous
// history, with the backlog (Redis 7's shiftReplicationId): the other
// replicas of the old primary resync partially from it. It drops its
// position record, since its data will now leave the old history.
func (s *Server) promote() error {
	h := &s.repl
	h.switchMu.Lock()
	defer h.switchMu.Unlock()
	h.mu.Lock()
	r := h.replica
	h.mu.Unlock()
	if r == nil {
		return nil
	}
	r.Stop()
	h.log.Shift(replication.NewID())
	err := s.engine.SetReplState(nil)
	h.mu.Lock()
	h.replica = nil
	h.mu.Unlock()
	s.engine.SetFollower(false)
	st := h.log.Stats()
	s.logger.Info("promoted to primary", "replid", st.ID, "replid2", st.ID2, "offset", st.End)
	return err
}

// stopReplication ends the replica side before the store closes.
func (s *Server) stopReplication() {
	h := &s.repl
	h.switchMu.Lock()
	defer h.switchMu.Unlock()
	h.mu.Lock()
	r := h.replica
	h.replica = nil
	h.mu.Unlock()
	if r != nil {
		r.Stop()
	}
}

// replicaStatus returns the replica side's status, ok false on a
// primary.
func (s *Server) replicaStatus() (replication.ReplicaStatus, bool) {
	h := &s.repl
	h.mu.Lock()
	r := h.replica
	h.mu.Unlock()
	if r == nil {
		return replication.ReplicaStatus{}, false
	}
	return r.Status(), true
}

// splitHostPort parses the replicaof directive's "host port".
func splitHostPort(v string) (string, int, error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return "", 0, fmt.Errorf("replicaof %q: want \"host port\"", v)
	}
	p, err := strconv.Atoi(f[1])
	if err != nil || p < 0 || p > 65535 {
		return "", 0, errors.New(errInvalidMasterPort)
	}
	return f[0], p, nil
}

func cmdReplicaOf(ctx *cmdContext) {
	s := ctx.c.s
	host, portArg := string(ctx.args[1]), ctx.args[2]
	if argIs(ctx.args[1], "no") && argIs(portArg, "one") {
		if err := s.promote(); err != nil {
			ctx.w.Error(errPromoteFailed(err))
			return
		}
		ctx.w.Simple("OK")
		return
	}
	port, ok := parseRedisInt(portArg)
	if !ok || port < 0 || port > 65535 {
		ctx.w.Error(errInvalidMasterPort)
		return
	}
	if st, ok := s.replicaStatus(); ok && st.Host == host && st.Port == int(port) {
		ctx.w.Simple("OK Already connected to specified master")
		return
	}
	s.follow(host, int(port))
	ctx.w.Simple("OK")
}

func cmdRole(ctx *cmdContext) {
	s := ctx.c.s
	w := ctx.w
	if st, ok := s.replicaStatus(); ok {
		w.Array(5)
		w.BulkString("slave")
		w.BulkString(st.Host)
		w.Int(int64(st.Port))
		w.BulkString(st.State)
		w.Int(st.Offset)
		return
	}
	_, end := s.repl.log.ID()
	reps := s.repl.primary.Replicas()
	w.Array(3)
	w.BulkString("master")
	w.Int(int64(end))
	w.Array(len(reps))
	for _, r := range reps {
		w.Array(3)
		w.BulkString(r.IP)
		w.BulkString(strconv.Itoa(r.Port))
		w.BulkString(strconv.FormatUint(r.Offset, 10))
	}
}

func cmdWait(ctx *cmdContext) {
	s := ctx.c.s
	n, ok := parseRedisInt(ctx.args[1])
	if !ok {
		ctx.w.Error(errValueNotInteger)
		return
	}
	ms, bad := parseTimeoutMs(ctx.args[2])
	if bad != "" {
		ctx.w.Error(bad)
		return
	}
	if _, ok := s.replicaStatus(); ok {
		ctx.w.Error(errWaitOnReplica)
		return
	}
	// The replicas must acknowledge the log as it ends now: the client's
	// writes, and everyone else's before them.
	primary, target := s.repl.primary, s.repl.primary.End()
	acked := func() int64 { return int64(primary.Acked(target)) }
	if got := acked(); got >= n || ctx.inMulti {
		ctx.w.Int(got) // inside EXEC, Redis answers at once
		return
	}
	// Blocked as XREAD BLOCK is (blocking.go), woken by every
	// acknowledgement: the event loop keeps serving the others.
	ctx.block = &blockRequest{
		acks:    true,
		keys:    [][]byte{[]byte(ackKey)},
		timeout: blockTimeout(ms),
		retry: func(rc *cmdContext) bool {
			got := acked()
			if got < n {
				return false
			}
			rc.w.Int(got)
			return true
		},
		onTimeout: func(w *replyWriter) { w.Int(acked()) },
	}
}

// ackDB and ackKey are where a blocked WAIT is registered with the
// blocked clients (blockRegistry): a database no key lives in, so a
// replica's acknowledgement is the only change that reaches them.
const (
	ackDB  = -1
	ackKey = "replica acknowledgements"
)

// wakeWaiters wakes the clients blocked in WAIT, after a replica
// acknowledged an offset.
func (s *Server) wakeWaiters() {
	s.blocks.signal([]stream.Change{{DB: ackDB, Key: []byte(ackKey), Kind: stream.Appended}})
}

func cmdReplConf(ctx *cmdContext) {
	args := ctx.args[1:]
	if len(args)%2 != 0 && !(len(args) >= 2 && argIs(args[0], "eddy-proto")) {
		ctx.w.Error(errSyntax)
		return
	}
	c := ctx.c
	if c.repl == nil {
		c.repl = &replConn{}
	}
	for len(args) > 0 {
		opt := args[0]
		switch {
		case argIs(opt, "listening-port"):
			p, ok := parseRedisInt(args[1])
			if !ok {
				ctx.w.Error(errValueNotInteger)
				return
			}
			c.repl.port = int(p)
		case argIs(opt, "eddy-proto"):
			if string(args[1]) != strconv.Itoa(replication.ProtoVersion) {
				ctx.w.Error(errEddyProtoVersion(args[1], replication.ProtoVersion))
				return
			}
			// The features that follow are this version's; a feature
			// unknown here is one this side does not use. The answer
			// names those that change the wire, so that the replica
			// knows this side uses them (an older primary names none).
			asked := make([]string, 0, len(args)-2)
			for _, f := range args[2:] {
				asked = append(asked, string(f))
			}
			agreed := replication.AgreedFeatures(asked)
			c.repl.proto = true
			c.repl.crc = slices.Contains(agreed, replication.FeatureCRC)
			ctx.w.Simple(strings.Join(append([]string{"OK"}, agreed...), " "))
			return
		case argIs(opt, "capa"), argIs(opt, "ip-address"):
		default:
			ctx.w.Error(errReplConfOption(opt))
			return
		}
		args = args[2:]
	}
	ctx.w.Simple("OK")
}

func cmdPSync(ctx *cmdContext) {
	c := ctx.c
	if c.repl == nil || !c.repl.proto {
		ctx.w.Error(errPSyncNeedsEddy)
		return
	}
	off, ok := parseRedisInt(ctx.args[2])
	if !ok {
		ctx.w.Error(errValueNotInteger)
		return
	}
	// As Redis: a replica serves its own replicas only while it follows
	// its primary, so that they never sync a history it is about to
	// replace (they retry).
	if st, ok := c.s.replicaStatus(); ok && !st.LinkUp {
		ctx.w.Error(errNoMasterLink)
		return
	}
	ip, _, _ := net.SplitHostPort(c.addr)
	c.repl.psync = &replication.PSync{ID: string(ctx.args[1]), Offset: off, IP: ip, Port: c.repl.port, CRC: c.repl.crc}
}

// serveReplicaLink takes a connection that sent PSYNC out of the event
// loop and serves it, on a goroutine of its own, as a replication link
// until it ends or the server stops. Frames are not RESP: the link reads
// the socket itself.
func (s *Server) serveReplicaLink(c *client, conn *loopConn) {
	req := *c.repl.psync
	c.repl.psync = nil
	nc := conn.detach()
	s.detached.Add(1)
	go func() {
		defer s.detached.Done()
		defer s.dropClient(c)
		if err := s.repl.primary.Serve(nc, req, s.done); err != nil {
			s.logger.Info("replica link ended", "replica", c.addr, "err", err)
		}
	}()
}

// syncStats are INFO's sync_full, sync_partial_ok, sync_partial_err.
func (s *Server) syncStats() (full, partOK, partErr int64) {
	if s.repl.primary == nil {
		return 0, 0, 0
	}
	return s.repl.primary.SyncStats()
}

// infoReplication writes INFO's replication section, Redis 7.0's fields
// in its order.
func (s *Server) infoReplication(line func(k string, v any)) {
	if s.repl.primary == nil {
		// A Server not made by New (unit tests): no replication state.
		line("role", "master")
		line("connected_slaves", 0)
		return
	}
	st := s.repl.log.Stats()
	rs, replica := s.replicaStatus()
	if replica {
		line("role", "slave")
		line("master_host", rs.Host)
		line("master_port", rs.Port)
		if rs.LinkUp {
			line("master_link_status", "up")
		} else {
			line("master_link_status", "down")
		}
		line("master_last_io_seconds_ago", rs.LastIOSecondsAgo)
		line("master_sync_in_progress", b2i(rs.SyncInProgress))
		off := max(rs.Offset, 0)
		line("slave_read_repl_offset", off)
		line("slave_repl_offset", off)
		if !rs.LinkUp {
			line("master_link_down_since_seconds", rs.DownSinceSeconds)
		}
		line("slave_priority", 100)
		line("slave_read_only", 1)
		line("replica_announced", 1)
	} else {
		line("role", "master")
	}
	reps := s.repl.primary.Replicas()
	line("connected_slaves", len(reps))
	for i, r := range reps {
		line(fmt.Sprintf("slave%d", i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d", r.IP, r.Port, r.State, r.Offset, r.Lag))
	}
	line("master_failover_state", "no-failover")
	line("master_replid", st.ID)
	if st.ID2 != "" {
		// Redis's second_repl_offset is one past the previous history's
		// last byte.
		line("master_replid2", st.ID2)
		line("master_repl_offset", st.End)
		line("second_repl_offset", st.End2+1)
	} else {
		line("master_replid2", strings.Repeat("0", 40))
		line("master_repl_offset", st.End)
		line("second_repl_offset", -1)
	}
	line("repl_backlog_active", 1)
	line("repl_backlog_size", st.Limit)
	line("repl_backlog_first_byte_offset", st.Start)
	line("repl_backlog_histlen", st.End-st.Start)
}
