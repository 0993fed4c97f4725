package bridge

import (
	"bufio"
	"net"
	"strconv"
	"sync"
)

// wire is the writing side of a connection to the NATS server: messages
// are written into a buffer under wmu and reach the socket when flushed,
// so a burst of them costs one write. conn and leaf embed one; who
// flushes differs (conn's read loop and its workers call flush, leaf's
// flusher goroutine does it on request).
type wire struct {
	wmu sync.Mutex
	nc  net.Conn      // guarded by wmu; nil while disconnected
	bw  *bufio.Writer // guarded by wmu
	num [20]byte      // guarded by wmu; writeMsgLocked formats sizes here
}

// attach makes nc the connection written to; set, if not nil, runs
// under the same lock (state that goes with the connection).
func (w *wire) attach(nc net.Conn, set func()) {
	w.wmu.Lock()
	w.nc, w.bw = nc, bufio.NewWriterSize(nc, 64<<10)
	if set != nil {
		set()
	}
	w.wmu.Unlock()
}

// detach forgets the connection, which has failed: writes until the
// next attach are dropped, like messages the server never got.
func (w *wire) detach() {
	w.wmu.Lock()
	w.nc, w.bw = nil, nil
	w.wmu.Unlock()
}

// write runs fn on the buffered writer, unless disconnected. Errors
// surface when flushing, or through the read loop, which sees the same
// broken connection.
func (w *wire) write(fn func(w *bufio.Writer)) {
	w.wmu.Lock()
	if w.bw != nil {
		fn(w.bw)
	}
	w.wmu.Unlock()
}

// flush sends what is buffered. A write that fails closes the
// connection: the read loop notices and reconnects.
func (w *wire) flush() {
	w.wmu.Lock()
	if w.bw != nil && w.bw.Buffered() > 0 {
		if err := w.bw.Flush(); err != nil && w.nc != nil {
			w.nc.Close()
		}
	}
	w.wmu.Unlock()
}

// shut flushes what is buffered and closes the connection for good.
func (w *wire) shut() {
	w.wmu.Lock()
	if w.bw != nil {
		w.bw.Flush()
	}
	if w.nc != nil {
		w.nc.Close()
	}
	w.wmu.Unlock()
}

// writeMsgLocked writes one message as the NATS protocol frames it: verb
// (hverb when hdr is not empty), subject, the reply subject if any, the
// header size (with hdr) and the total size, then header and payload.
// wmu is held and bw is not nil.
func (w *wire) writeMsgLocked(verb, hverb, subject string, reply, hdr, data []byte) {
	b := w.bw
	if len(hdr) > 0 {
		verb = hverb
	}
	b.WriteString(verb)
	b.WriteByte(' ')
	b.WriteString(subject)
	b.WriteByte(' ')
	if len(reply) > 0 {
		b.Write(reply)
		b.WriteByte(' ')
	}
	if len(hdr) > 0 {
		b.Write(strconv.AppendInt(w.num[:0], int64(len(hdr)), 10))
		b.WriteByte(' ')
	}
	b.Write(strconv.AppendInt(w.num[:0], int64(len(hdr)+len(data)), 10))
	b.WriteString("\r\n")
	b.Write(hdr)
	b.Write(data)
	b.WriteString("\r\n")
}
