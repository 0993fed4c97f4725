package replication

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"sync"

	"github.com/eddy-streams/eddy/stream"
)

// Log errors.
var (
	// ErrBehind: the offset asked for is no longer (or not yet) in the log.
	ErrBehind = errors.New("replication: offset not covered by the backlog")
	// ErrNewHistory: the log started a new history under the cursor.
	ErrNewHistory = errors.New("replication: the log started a new history")
)

// DefaultBacklog is Redis's repl-backlog-size default, 1mb.
const DefaultBacklog = 1 << 20

// pinnedFactor bounds how far past the backlog size a cursor may hold
// the log (a replica loading a snapshot, or a slow one): Redis drops a
// replica whose output buffer passes 256mb; here the log itself is that
// buffer.
const pinnedMax = 256 << 20

// Log is the replication log: the payloads of committed batches (see
// doc.go), each at its offset, the newest kept up to the backlog size.
// Cursors read it from an offset; a cursor pins what it has not read
// yet, up to pinnedMax bytes.
type Log struct {
	mu sync.Mutex
	id string // guarded by mu: the history's replication id
	// id2 is the history this one continued (Redis's master_replid2),
	// "" if none: a reader of id2 whose data ends at or before off2 is
	// on this history too, since the two agree up to off2.
	id2     string    // guarded by mu
	off2    uint64    // guarded by mu
	epoch   uint64    // guarded by mu: bumped with every new history
	entries []entry   // guarded by mu: in offset order
	start   uint64    // guarded by mu: offset of entries[0] (end when empty)
	end     uint64    // guarded by mu: offset after the last entry
	size    int       // guarded by mu: payload bytes held
	limit   int       // guarded by mu: backlog size
	cursors []*Cursor // guarded by mu
	// active: a replica has attached (a cursor was made) or this node
	// follows a primary. Until then a primary logs nothing, as Redis keeps
	// no backlog before its first replica: the copy of every batch would
	// cost writes CPU for nothing. The first replica full-
	// syncs from a snapshot, so nothing it needs is missing.
	active bool          // guarded by mu
	notify chan struct{} // guarded by mu: closed when the log grows or changes history
}

type entry struct {
	off     uint64
	payload []byte
}

// NewLog returns an empty log of a new history at offset 0 that keeps
// backlog bytes.
func NewLog(backlog int) *Log {
	return &Log{id: NewID(), limit: max(backlog, 1), notify: make(chan struct{})}
}

// NewID returns a new random replication id: 40 hex digits.
func NewID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ID returns the log's history and where it ends.
func (l *Log) ID() (id string, end uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.id, l.end
}

// Stats are the figures INFO replication reports.
type Stats struct {
	ID         string
	Start, End uint64 // the backlog is [Start, End)
	Limit      int
	// ID2 is the previous history ("" if none) and End2 where it ended
	// (INFO's master_replid2, and second_repl_offset = End2+1).
	ID2  string
	End2 uint64
}

// Stats returns the log's figures.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{ID: l.id, Start: l.start, End: l.end, Limit: l.limit, ID2: l.id2, End2: l.off2}
}

// SetBacklog changes the backlog size.
func (l *Log) SetBacklog(n int) {
	l.mu.Lock()
	l.limit = max(n, 1)
	l.trimLocked()
	l.mu.Unlock()
}

// Reset empties the log and starts it at offset off of history id (a
// replica after a full sync, or a server starting a new history). Open
// cursors fail with ErrNewHistory.
func (l *Log) Reset(id string, off uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id, l.id2, l.off2, l.epoch = id, "", 0, l.epoch+1
	clear(l.entries)
	l.entries, l.start, l.end, l.size = l.entries[:0], off, off, 0
	l.signalLocked()
}

// Shift starts history id where the current one ends and keeps the
// current one as the previous history, with the backlog: a promoted
// replica (REPLICAOF NO ONE), or a replica whose primary continued it
// under a new id. Replicas of the old history whose data ends at or
// before here resync partially (Redis 7's shiftReplicationId). Open
// cursors fail with ErrNewHistory, so that this node's own replicas
// reconnect and learn the new id. The log stays active from here: the
// offsets must keep counting every batch for those replicas.
func (l *Log) Shift(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id2, l.off2 = l.id, l.end
	l.id, l.epoch = id, l.epoch+1
	l.active = true
	l.signalLocked()
}

// AppendBatch adds a committed batch at the log's end: the engine's
// OnApply hook. It copies what it keeps.
func (l *Log) AppendBatch(repr []byte, changes []stream.Change) {
	l.mu.Lock()
	if !l.active {
		l.mu.Unlock()
		return
	}
	p := AppendBatch(make([]byte, 0, 16+len(repr)+16*len(changes)), l.end, changes, repr)
	l.appendLocked(p)
	l.mu.Unlock()
}

// AppendPayload adds a batch payload received from a primary (a replica
// keeps the log for its own replicas); it must start at the log's end.
// The log keeps p.
func (l *Log) AppendPayload(p []byte) error {
	off, _, _, err := DecodeBatch(p)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if off != l.end {
		return ErrOffset
	}
	l.active = true
	l.appendLocked(p)
	return nil
}

func (l *Log) appendLocked(p []byte) {
	l.entries = append(l.entries, entry{off: l.end, payload: p})
	l.end += uint64(len(p))
	l.size += len(p)
	l.trimLocked()
	l.signalLocked()
}

func (l *Log) signalLocked() {
	close(l.notify)
	l.notify = make(chan struct{})
}

// trimLocked drops the oldest entries beyond the backlog size, except
// those a cursor has yet to read while the log is under pinnedMax.
func (l *Log) trimLocked() {
	pin := l.end
	for _, c := range l.cursors {
		pin = min(pin, c.pos)
	}
	n := 0
	for n < len(l.entries)-1 && l.size > l.limit {
		e := l.entries[n]
		if e.off >= pin && l.size <= pinnedMax {
			break
		}
		l.size -= len(e.payload)
		n++
	}
	if n == 0 {
		return
	}
	clear(l.entries[:n])
	l.entries = l.entries[n:]
	l.start = l.entries[0].off
}

// Covers reports whether a reader of history id can continue from off:
// off is on this history (see coversLocked).
func (l *Log) Covers(id string, off uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.coversLocked(id, off)
}

// coversLocked: id is the log's history, or the previous one and off is
// at or before where that ended; and off is the log's end or an entry's
// start.
func (l *Log) coversLocked(id string, off uint64) bool {
	if id != l.id && (l.id2 == "" || id != l.id2 || off > l.off2) {
		return false
	}
	if off < l.start || off > l.end {
		return false
	}
	return off == l.end || l.indexLocked(off) >= 0
}

// indexLocked returns the index of the entry at off, -1 if none.
func (l *Log) indexLocked(off uint64) int {
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].off >= off })
	if i < len(l.entries) && l.entries[i].off == off {
		return i
	}
	return -1
}

// Cursor reads the log from an offset, in order.
type Cursor struct {
	l     *Log
	pos   uint64 // guarded by l.mu: the next offset to read
	epoch uint64
	id    string // the history it reads
}

// ID is the history the cursor reads: the log's when it was made, which
// a reader of the previous history continues under.
func (c *Cursor) ID() string { return c.id }

// NewCursor returns a cursor at off of history id (which it pins), or
// ErrBehind if the log does not cover it. id may be the previous
// history (Shift): the cursor reads the current one.
func (l *Log) NewCursor(id string, off uint64) (*Cursor, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.coversLocked(id, off) {
		return nil, ErrBehind
	}
	c := &Cursor{l: l, pos: off, epoch: l.epoch, id: l.id}
	l.cursors = append(l.cursors, c)
	l.active = true
	return c, nil
}

// newCursorAtEndLocked is NewCursor at the log's end.
func (l *Log) newCursorAtEndLocked() *Cursor {
	c := &Cursor{l: l, pos: l.end, epoch: l.epoch, id: l.id}
	l.cursors = append(l.cursors, c)
	l.active = true
	return c
}

// Close releases the cursor's pin.
func (c *Cursor) Close() {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, o := range l.cursors {
		if o == c {
			l.cursors = append(l.cursors[:i], l.cursors[i+1:]...)
			break
		}
	}
	l.trimLocked()
}

// Next appends to dst the payloads from the cursor's position, at most
// max bytes of them (at least one), and moves past them. With nothing
// to read it returns a channel closed when there may be.
func (c *Cursor) Next(dst [][]byte, maxBytes int) ([][]byte, <-chan struct{}, error) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.epoch != l.epoch {
		return dst, nil, ErrNewHistory
	}
	if c.pos == l.end {
		return dst, l.notify, nil
	}
	i := l.indexLocked(c.pos)
	if i < 0 {
		return dst, nil, ErrBehind
	}
	n := 0
	for ; i < len(l.entries) && (n == 0 || n+len(l.entries[i].payload) <= maxBytes); i++ {
		p := l.entries[i].payload
		dst = append(dst, p)
		n += len(p)
		c.pos += uint64(len(p))
	}
	return dst, nil, nil
}
