package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
)

// conn is one RESP2 connection with just what the loads need. It is
// written by hand rather than through go-redis so that the measurement
// loops allocate nothing per call: commands are appended into reused
// buffers, replies are parsed in place from the bufio buffer and only
// the bytes a load keeps (entry IDs, the XAUTOCLAIM cursor) are copied
// out. The client shares the machine's two cores with the server under
// test, so its own CPU cost would otherwise show up in both servers'
// figures.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// errProtocol is returned when a reply does not have the shape a load
// expects (a server error reply is returned as a serverError instead).
var errProtocol = errors.New("unexpected reply")

// serverError is a "-ERR …" reply.
type serverError string

func (e serverError) Error() string { return string(e) }

func dial(addr string) (*conn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return newConn(nc), nil
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}
}

func (c *conn) Close() error { return c.nc.Close() }

// send writes one or more already encoded commands and flushes them.
func (c *conn) send(cmd []byte) error {
	if _, err := c.w.Write(cmd); err != nil {
		return err
	}
	return c.w.Flush()
}

// do sends an encoded command and skips its reply.
func (c *conn) do(cmd []byte) error {
	if err := c.send(cmd); err != nil {
		return err
	}
	return c.skip()
}

// line reads one reply header line without its CRLF. The slice points
// into the read buffer: it is valid until the next read.
func (c *conn) line() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(b) < 3 || b[len(b)-2] != '\r' {
		return nil, errProtocol
	}
	b = b[:len(b)-2]
	if b[0] == '-' {
		return nil, serverError(b[1:])
	}
	return b, nil
}

// atoi parses a RESP length or integer; strconv would need a string.
func atoi(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errProtocol
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, errProtocol
		}
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, errProtocol
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// header reads a line that must start with kind and returns its number.
func (c *conn) header(kind byte) (int64, error) {
	b, err := c.line()
	if err != nil {
		return 0, err
	}
	if b[0] != kind {
		return 0, fmt.Errorf("%w: want %q, got %q", errProtocol, kind, b)
	}
	return atoi(b[1:])
}

// arrayLen reads an array header; a nil array is -1.
func (c *conn) arrayLen() (int, error) {
	n, err := c.header('*')
	return int(n), err
}

// integer reads an integer reply.
func (c *conn) integer() (int64, error) { return c.header(':') }

// bulk appends the content of a bulk string reply to dst; ok is false
// for a nil bulk string.
func (c *conn) bulk(dst []byte) (out []byte, ok bool, err error) {
	n, err := c.header('$')
	if err != nil || n < 0 {
		return dst, false, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, n)...) // no allocation while cap suffices
	if _, err := io.ReadFull(c.r, dst[start:]); err != nil {
		return dst, false, err
	}
	_, err = c.r.Discard(2)
	return dst, true, err
}

// skip reads and discards one whole reply of any type.
func (c *conn) skip() error {
	b, err := c.line()
	if err != nil {
		return err
	}
	switch b[0] {
	case '+', ':':
		return nil
	case '$':
		n, err := atoi(b[1:])
		if err != nil || n < 0 {
			return err
		}
		_, err = c.r.Discard(int(n) + 2)
		return err
	case '*':
		n, err := atoi(b[1:])
		if err != nil {
			return err
		}
		for i := int64(0); i < n; i++ {
			if err := c.skip(); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%w: %q", errProtocol, b)
}

// idList holds entry IDs back to back in one buffer, so a read/ack loop
// can collect them and write them out again without allocating.
type idList struct {
	buf  []byte
	ends []int
}

func (l *idList) reset() { l.buf, l.ends = l.buf[:0], l.ends[:0] }

func (l *idList) len() int { return len(l.ends) }

func (l *idList) at(i int) []byte {
	start := 0
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.buf[start:l.ends[i]]
}

// entries reads an XREADGROUP/XREAD reply (RESP2: an array of [key,
// entries] pairs, or a nil array when nothing was read) and appends each
// entry's ID to ids. Fields are skipped.
func (c *conn) entries(ids *idList) error {
	streams, err := c.arrayLen()
	if err != nil {
		return err
	}
	for i := 0; i < streams; i++ {
		if n, err := c.arrayLen(); err != nil || n != 2 {
			return orProtocol(err)
		}
		if err := c.skip(); err != nil { // key
			return err
		}
		if err := c.entryArray(ids); err != nil {
			return err
		}
	}
	return nil
}

// entryArray reads an array of [id, fields] entries, appending the IDs.
func (c *conn) entryArray(ids *idList) error {
	n, err := c.arrayLen()
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		if m, err := c.arrayLen(); err != nil || m != 2 {
			return orProtocol(err)
		}
		var ok bool
		if ids.buf, ok, err = c.bulk(ids.buf); err != nil || !ok {
			return orProtocol(err)
		}
		ids.ends = append(ids.ends, len(ids.buf))
		if err := c.skip(); err != nil { // fields, or nil for a deleted entry
			return err
		}
	}
	return nil
}

// autoclaim reads an XAUTOCLAIM reply (Redis 7: cursor, claimed entries,
// deleted IDs), replacing cursor with the next cursor and returning how
// many entries were claimed.
func (c *conn) autoclaim(cursor []byte, claimed *idList) ([]byte, error) {
	if n, err := c.arrayLen(); err != nil || n != 3 {
		return cursor, orProtocol(err)
	}
	cursor, ok, err := c.bulk(cursor[:0])
	if err != nil || !ok {
		return cursor, orProtocol(err)
	}
	if err := c.entryArray(claimed); err != nil {
		return cursor, err
	}
	return cursor, c.skip()
}

func orProtocol(err error) error {
	if err == nil {
		return errProtocol
	}
	return err
}
