package replication

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// retryDelay is how long a replica waits before connecting again after
// its link failed (Redis retries once a second).
const retryDelay = time.Second

// ReplicaConfig configures a Replica.
type ReplicaConfig struct {
	Host string
	Port int
	// ListeningPort is this server's own port, announced to the primary
	// (INFO's slaveN:port=).
	ListeningPort int
	Engine        *stream.Engine
	// Log receives every batch applied, so that replicas of this replica
	// follow the same history at the same offsets.
	Log    *Log
	Logger *slog.Logger
	// Auth returns the masteruser and masterauth directives, read at
	// every connection (CONFIG SET applies from the next one); pass ""
	// sends no AUTH.
	Auth func() (user, pass string)
	// Loading, if set, is called with true before a full sync locks the
	// engine for its load and with false after, so that the server
	// answers -LOADING meanwhile instead of making readers wait.
	Loading func(on bool)
}

// Replica follows a primary: it connects, syncs (partially from its
// recorded position, or fully), applies the batches the primary streams,
// and reconnects when the link fails, until Stop.
type Replica struct {
	cfg    ReplicaConfig
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	state     string    // guarded by mu: "connect", "connecting", "sync", "connected"
	id        string    // guarded by mu: the history followed; "?" before the first sync
	off       int64     // guarded by mu: where the data ends; -1 before the first sync
	lastIO    time.Time // guarded by mu
	downSince time.Time // guarded by mu
}

// ReplicaStatus is what INFO replication and ROLE report on a replica.
type ReplicaStatus struct {
	Host             string
	Port             int
	State            string // "connect", "connecting", "sync", "connected"
	LinkUp           bool
	Offset           int64 // -1 before the first sync
	LastIOSecondsAgo int64
	DownSinceSeconds int64 // when the link is down
	SyncInProgress   bool
}

// StartReplica starts following cfg.Host:cfg.Port.
func StartReplica(cfg ReplicaConfig) *Replica {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Replica{cfg: cfg, cancel: cancel, done: make(chan struct{}), state: "connect", id: "?", off: -1,
		downSince: time.Now()}
	if st, ok, err := cfg.Engine.ReplState(); err != nil {
		cfg.Logger.Warn("reading the replication state failed; a full sync follows", "err", err)
	} else if ok {
		if id, off, err := decodeState(st); err == nil {
			r.id, r.off = id, int64(off)
			// A replica switching primaries keeps its backlog, for its
			// own replicas, when the log is still that position's.
			if lid, end := cfg.Log.ID(); lid != id || end != off {
				cfg.Log.Reset(id, off)
			}
		}
	}
	go func() {
		defer close(r.done)
		r.run(ctx)
	}()
	return r
}

// Stop ends the link and waits for the replica's goroutine.
func (r *Replica) Stop() {
	r.cancel()
	<-r.done
}

// Status returns the replica's link state.
func (r *Replica) Status() ReplicaStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := ReplicaStatus{Host: r.cfg.Host, Port: r.cfg.Port, State: r.state, LinkUp: r.state == "connected",
		Offset: r.off, SyncInProgress: r.state == "sync", LastIOSecondsAgo: -1}
	if !r.lastIO.IsZero() {
		st.LastIOSecondsAgo = int64(time.Since(r.lastIO) / time.Second)
	}
	if !st.LinkUp {
		st.DownSinceSeconds = int64(time.Since(r.downSince) / time.Second)
	}
	return st
}

func (r *Replica) setState(s string) {
	r.mu.Lock()
	if r.state == "connected" && s != "connected" {
		r.downSince = time.Now()
	}
	r.state = s
	r.mu.Unlock()
}

func (r *Replica) run(ctx context.Context) {
	addr := net.JoinHostPort(r.cfg.Host, strconv.Itoa(r.cfg.Port))
	for {
		err := r.session(ctx, addr)
		r.setState("connect")
		if ctx.Err() != nil {
			return
		}
		r.cfg.Logger.Warn("replication link failed; retrying", "primary", addr, "err", err)
		t := time.NewTimer(retryDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// session is one connection to the primary: handshake, sync, then
// batches until the link fails or ctx ends.
func (r *Replica) session(ctx context.Context, addr string) error {
	r.setState("connecting")
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 256<<10)
	bw := bufio.NewWriterSize(conn, 4<<10)
	conn.SetDeadline(time.Now().Add(linkTimeout))

	r.mu.Lock()
	id, off := r.id, r.off
	r.mu.Unlock()
	var steps [][]string
	// As Redis's replica does, AUTH comes first: a primary with
	// requirepass refuses everything else before it.
	if r.cfg.Auth != nil {
		if user, pass := r.cfg.Auth(); pass != "" {
			if user != "" {
				steps = append(steps, []string{"AUTH", user, pass})
			} else {
				steps = append(steps, []string{"AUTH", pass})
			}
		}
	}
	steps = append(steps,
		[]string{"PING"},
		[]string{"REPLCONF", "listening-port", strconv.Itoa(r.cfg.ListeningPort)},
		append([]string{"REPLCONF", "eddy-proto", strconv.Itoa(ProtoVersion)}, Features...),
		[]string{"PSYNC", id, strconv.FormatInt(off, 10)},
	)
	var reply string
	crc := false
	for _, args := range steps {
		if reply, err = roundTrip(br, bw, args); err != nil {
			return err
		}
		if strings.HasPrefix(reply, "-") {
			return fmt.Errorf("primary refused %s: %s", args[0], reply[1:])
		}
		if args[0] == "REPLCONF" && args[1] == "eddy-proto" {
			// "+OK crc" from a primary that checksums its frames; an
			// older one answers "+OK".
			fs := strings.Fields(reply)
			crc = len(fs) > 1 && slices.Contains(fs[1:], FeatureCRC)
		}
	}
	r.cfg.Logger.Debug("PSYNC answered", "id", id, "offset", off, "reply", reply, "crc", crc)
	f := strings.Fields(reply)
	switch {
	case len(f) == 3 && f[0] == "+FULLRESYNC":
		o, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad reply to PSYNC: %q", reply)
		}
		if err := r.loadSnapshot(conn, br, crc, f[1], o); err != nil {
			return err
		}
	case len(f) == 2 && f[0] == "+CONTINUE" && off >= 0:
		if lid, end := r.cfg.Log.ID(); lid != id || end != uint64(off) {
			r.cfg.Log.Reset(id, uint64(off))
		}
		if nid := f[1]; nid != id {
			if err := r.adopt(nid, uint64(off)); err != nil {
				return err
			}
		}
		r.cfg.Logger.Info("partial resync from the primary", "primary", addr, "offset", off, "id", f[1])
	default:
		return fmt.Errorf("bad reply to PSYNC: %q", reply)
	}
	r.setState("connected")
	return r.follow(conn, br, bw, crc)
}

// adopt takes history nid, under which the primary continues this
// replica's history at off (it was promoted, or adopted it itself): the
// store's position record names nid from now, and the log keeps the old
// id as its previous history, as Redis's replica shifts its replid.
func (r *Replica) adopt(nid string, off uint64) error {
	if err := r.cfg.Engine.SetReplState(encodeState(nid, off)); err != nil {
		return err
	}
	r.cfg.Log.Shift(nid)
	r.mu.Lock()
	r.id = nid
	r.mu.Unlock()
	return nil
}

// roundTrip sends one command and reads its one-line reply.
func roundTrip(br *bufio.Reader, bw *bufio.Writer, args []string) (string, error) {
	fmt.Fprintf(bw, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(bw, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := bw.Flush(); err != nil {
		return "", err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// loadSnapshot replaces the store with the primary's snapshot, which
// follows on the link, and records history id at offset off.
func (r *Replica) loadSnapshot(conn net.Conn, br *bufio.Reader, crc bool, id string, off uint64) error {
	r.setState("sync")
	start := time.Now()
	if r.cfg.Loading != nil {
		r.cfg.Loading(true)
		defer r.cfg.Loading(false)
	}
	fs, err := r.cfg.Engine.BeginFullSync()
	if err != nil {
		return err
	}
	// Until Finish, this side's own replicas must not read the old log.
	r.cfg.Log.Reset(NewID(), 0)
	r.mu.Lock()
	r.id, r.off = "?", -1
	r.mu.Unlock()
	var buf []byte
	var n uint64
	for {
		conn.SetReadDeadline(time.Now().Add(linkTimeout))
		typ, payload, nbuf, err := readFrame(br, crc, buf)
		buf = nbuf
		if err != nil {
			return errors.Join(err, fs.Abort())
		}
		switch typ {
		case FrameRecords:
			err = eachRecord(payload, func(k, v []byte) error {
				n++
				return fs.Put(k, v)
			})
		case FrameSnapEnd:
			if len(payload) != 16 || binary.BigEndian.Uint64(payload) != n || binary.BigEndian.Uint64(payload[8:]) != off {
				err = fmt.Errorf("%w: snapshot end does not match (%d records)", ErrBadFrame, n)
				break
			}
			if err = fs.Finish(encodeState(id, off)); err != nil {
				return err
			}
			r.cfg.Log.Reset(id, off)
			r.mu.Lock()
			r.id, r.off, r.lastIO = id, int64(off), time.Now()
			r.mu.Unlock()
			r.cfg.Logger.Info("full sync loaded", "records", n, "offset", off,
				"took", time.Since(start).Round(time.Millisecond))
			return nil
		default:
			err = fmt.Errorf("%w: type %q during a full sync", ErrBadFrame, typ)
		}
		if err != nil {
			return errors.Join(err, fs.Abort())
		}
	}
}

// follow applies batches until the link fails, acking what it applied.
func (r *Replica) follow(conn net.Conn, br *bufio.Reader, bw *bufio.Writer, crc bool) error {
	var buf []byte
	r.mu.Lock()
	id, off := r.id, uint64(r.off)
	r.mu.Unlock()
	if err := writeU64Frame(bw, crc, FrameAck, off); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	for {
		conn.SetReadDeadline(time.Now().Add(linkTimeout))
		typ, payload, nbuf, err := readFrame(br, crc, buf)
		buf = nbuf
		if err != nil {
			return err
		}
		ack := false
		switch typ {
		case FrameBatch:
			// The log keeps the payload and OnCommit the keys: a copy
			// of their own.
			p := append([]byte(nil), payload...)
			bo, changes, repr, err := DecodeBatch(p)
			if err != nil {
				return err
			}
			if bo != off {
				return fmt.Errorf("%w: batch at %d, expected %d", ErrOffset, bo, off)
			}
			next := off + uint64(len(p))
			var logErr error
			if err := r.cfg.Engine.ApplyReplicated(repr, encodeState(id, next), changes, func() {
				logErr = r.cfg.Log.AppendPayload(p)
			}); err != nil {
				return fmt.Errorf("applying a batch at %d: %w", off, err)
			}
			if logErr != nil {
				return logErr
			}
			off = next
			r.mu.Lock()
			r.off, r.lastIO = int64(off), time.Now()
			r.mu.Unlock()
			ack = br.Buffered() == 0
		case FrameHeartbeat:
			r.mu.Lock()
			r.lastIO = time.Now()
			r.mu.Unlock()
			ack = true
		default:
			return fmt.Errorf("%w: type %q from the primary", ErrBadFrame, typ)
		}
		if ack {
			conn.SetWriteDeadline(time.Now().Add(linkTimeout))
			if err := writeU64Frame(bw, crc, FrameAck, off); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

// encodeState is the replication state record: id | offset u64.
func encodeState(id string, off uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(id), off)
}

func decodeState(v []byte) (id string, off uint64, err error) {
	if len(v) < 9 {
		return "", 0, fmt.Errorf("replication: bad state record")
	}
	n := len(v) - 8
	return string(v[:n]), binary.BigEndian.Uint64(v[n:]), nil
}
