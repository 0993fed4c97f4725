package replication

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// heartbeat is how often an idle link carries a heartbeat (Redis's
// repl-ping-replica-period is 10s; acks also ride on it, so it is
// shorter, as Redis's replicas ack every second).
const heartbeat = time.Second

// linkTimeout is how long a link may stay silent before it is dropped
// (Redis's repl-timeout).
const linkTimeout = 60 * time.Second

// frameBytes is how many batch bytes one write to a replica carries at
// most, and the size of a snapshot records frame.
const frameBytes = 256 << 10

// Primary serves replicas: it answers PSYNC with a partial or full sync
// and streams the log, and keeps each replica's acknowledged offset for
// INFO, ROLE and WAIT.
type Primary struct {
	log    *Log
	eng    *stream.Engine
	logger *slog.Logger

	mu    sync.Mutex
	links map[*link]struct{} // guarded by mu
	// onAck is called after each acknowledgement of a replica (WAIT's
	// wake-up); nil for none.
	onAck    atomic.Pointer[func()]
	syncFull atomic.Int64
	partOK   atomic.Int64
	partErr  atomic.Int64
}

// link is one connected replica.
type link struct {
	ip      string
	port    int
	state   atomic.Value // "wait_bgsave", "send_bulk", "online"
	acked   atomic.Uint64
	lastAck atomic.Int64 // unix ms
}

// NewPrimary returns the primary side over log and eng.
func NewPrimary(log *Log, eng *stream.Engine, logger *slog.Logger) *Primary {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Primary{log: log, eng: eng, logger: logger, links: make(map[*link]struct{})}
}

// OnAck makes fn run after each acknowledgement of a replica, on the
// link's goroutine: WAIT is woken by it.
func (p *Primary) OnAck(fn func()) { p.onAck.Store(&fn) }

// SyncStats are INFO's sync_full, sync_partial_ok and sync_partial_err.
func (p *Primary) SyncStats() (full, partialOK, partialErr int64) {
	return p.syncFull.Load(), p.partOK.Load(), p.partErr.Load()
}

// ReplicaInfo is one connected replica as INFO and ROLE report it.
type ReplicaInfo struct {
	IP     string
	Port   int
	State  string
	Offset uint64
	Lag    int64 // seconds since its last ack
}

// Replicas returns the connected replicas.
func (p *Primary) Replicas() []ReplicaInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now().UnixMilli()
	out := make([]ReplicaInfo, 0, len(p.links))
	for l := range p.links {
		st, _ := l.state.Load().(string)
		out = append(out, ReplicaInfo{IP: l.ip, Port: l.port, State: st, Offset: l.acked.Load(),
			Lag: (now - l.lastAck.Load()) / 1000})
	}
	return out
}

// End is the log's current end: the offset a WAIT waits for its
// replicas to acknowledge.
func (p *Primary) End() uint64 {
	_, end := p.log.ID()
	return end
}

// Acked counts the replicas that acknowledged offset target (WAIT).
func (p *Primary) Acked(target uint64) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := 0
	for l := range p.links {
		if l.acked.Load() >= target {
			got++
		}
	}
	return got
}

func (p *Primary) noteAck(l *link, off uint64) {
	l.acked.Store(off)
	l.lastAck.Store(time.Now().UnixMilli())
	if fn := p.onAck.Load(); fn != nil {
		(*fn)()
	}
}

// PSync is a replica's request, from the handshake on the RESP port.
type PSync struct {
	ID     string // "?" for none
	Offset int64  // -1 for none
	IP     string
	Port   int  // the replica's listening port
	CRC    bool // feature "crc" agreed: frames carry checksums
}

// Serve runs the link with a replica that sent PSYNC on conn: it writes
// the +FULLRESYNC or +CONTINUE line itself, then frames, until the link
// fails or done is closed. It closes conn.
func (p *Primary) Serve(conn net.Conn, req PSync, done <-chan struct{}) error {
	defer conn.Close()
	l := &link{ip: req.IP, port: req.Port}
	l.state.Store("wait_bgsave")
	l.lastAck.Store(time.Now().UnixMilli())
	w := bufio.NewWriterSize(conn, 64<<10)

	var cur *Cursor
	if req.Offset >= 0 {
		if c, err := p.log.NewCursor(req.ID, uint64(req.Offset)); err == nil {
			cur = c
		}
	}
	p.mu.Lock()
	p.links[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
	}()
	if cur != nil {
		p.partOK.Add(1)
		l.acked.Store(uint64(req.Offset))
		// The cursor's history: the replica's, or the one that continued
		// it, which the replica then adopts.
		fmt.Fprintf(w, "+CONTINUE %s\r\n", cur.ID())
	} else {
		if req.ID != "?" {
			p.partErr.Add(1)
		}
		p.syncFull.Add(1)
		var err error
		if cur, err = p.fullSync(conn, w, l, req.CRC); err != nil {
			return err
		}
	}
	defer cur.Close()
	l.state.Store("online")

	// The replica's acks: a failed read ends the link.
	readErr := make(chan error, 1)
	go func() {
		r := bufio.NewReader(conn)
		var buf []byte
		for {
			conn.SetReadDeadline(time.Now().Add(linkTimeout))
			typ, payload, nbuf, err := readFrame(r, req.CRC, buf)
			buf = nbuf
			if err != nil {
				readErr <- err
				return
			}
			if typ != FrameAck {
				readErr <- fmt.Errorf("%w: type %q from a replica", ErrBadFrame, typ)
				return
			}
			off, err := decodeU64(payload)
			if err != nil {
				readErr <- err
				return
			}
			p.noteAck(l, off)
		}
	}()

	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	var batch [][]byte
	for {
		var wait <-chan struct{}
		var err error
		batch, wait, err = cur.Next(batch[:0], frameBytes)
		if err != nil {
			return err
		}
		if wait == nil {
			for _, pl := range batch {
				if err := writeFrame(w, req.CRC, FrameBatch, pl); err != nil {
					return err
				}
			}
			clear(batch)
			continue
		}
		if w.Buffered() > 0 {
			conn.SetWriteDeadline(time.Now().Add(linkTimeout))
			if err := w.Flush(); err != nil {
				return err
			}
		}
		select {
		case <-wait:
		case <-tick.C:
			_, end := p.log.ID()
			if err := writeU64Frame(w, req.CRC, FrameHeartbeat, end); err != nil {
				return err
			}
		case err := <-readErr:
			return err
		case <-done:
			w.Flush()
			return nil
		}
	}
}

// fullSync writes +FULLRESYNC and a snapshot of the store, and returns a
// cursor at the snapshot's offset.
func (p *Primary) fullSync(conn net.Conn, w *bufio.Writer, l *link, crc bool) (*Cursor, error) {
	var cur *Cursor
	var id string
	var off uint64
	snap := p.eng.Snapshot(func() {
		p.log.mu.Lock()
		id, off = p.log.id, p.log.end
		cur = p.log.newCursorAtEndLocked()
		p.log.mu.Unlock()
	})
	defer snap.Close()
	l.state.Store("send_bulk")
	l.acked.Store(0)
	fmt.Fprintf(w, "+FULLRESYNC %s %d\r\n", id, off)
	start := time.Now()
	var buf []byte
	var n uint64
	err := snap.ForEach(func(k, v []byte) error {
		buf = appendRecord(buf, k, v)
		n++
		if len(buf) < frameBytes {
			return nil
		}
		conn.SetWriteDeadline(time.Now().Add(linkTimeout))
		err := writeFrame(w, crc, FrameRecords, buf)
		buf = buf[:0]
		return err
	})
	if err == nil && len(buf) > 0 {
		err = writeFrame(w, crc, FrameRecords, buf)
	}
	if err == nil {
		var end []byte
		end = binary.BigEndian.AppendUint64(end, n)
		end = binary.BigEndian.AppendUint64(end, off)
		err = writeFrame(w, crc, FrameSnapEnd, end)
	}
	if err != nil {
		cur.Close()
		return nil, err
	}
	p.logger.Info("full sync sent", "replica", net.JoinHostPort(l.ip, fmt.Sprint(l.port)), "records", n,
		"offset", off, "took", time.Since(start).Round(time.Millisecond))
	return cur, nil
}
