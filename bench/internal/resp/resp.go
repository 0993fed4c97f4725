// Package resp is the raw RESP2 client the bench programs share: commands
// are appended into reused buffers and replies are read in place from a
// bufio buffer, so a measurement loop allocates nothing per call. The
// client shares the machine's cores with the server under test; a lean
// client keeps its cost small and equal for Eddy and Redis.
package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// ErrProtocol is returned when a reply does not have the expected shape.
var ErrProtocol = errors.New("unexpected reply")

// ServerError is a "-ERR …" reply.
type ServerError string

func (e ServerError) Error() string { return string(e) }

// Conn is one RESP2 connection.
type Conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// Dial connects to addr, giving up after timeout.
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	c := &Conn{nc: nc}
	c.r, c.w = newBufs(nc)
	return c, nil
}

func newBufs(nc net.Conn) (*bufio.Reader, *bufio.Writer) {
	return bufio.NewReaderSize(nc, 64<<10), bufio.NewWriterSize(nc, 64<<10)
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// SetDeadline bounds every read and write from now on; zero removes it.
func (c *Conn) SetDeadline(t time.Time) error { return c.nc.SetDeadline(t) }

// Send writes already encoded commands and flushes them.
func (c *Conn) Send(cmd []byte) error {
	if _, err := c.w.Write(cmd); err != nil {
		return err
	}
	return c.w.Flush()
}

// Do sends one encoded command and skips its reply.
func (c *Conn) Do(cmd []byte) error {
	if err := c.Send(cmd); err != nil {
		return err
	}
	return c.Skip()
}

// Command sends args as one command and returns its reply rendered as
// text (bulk strings as their content, arrays flattened with spaces). It
// allocates; it is for setup and checks, not measured loops.
func (c *Conn) Command(args ...string) (string, error) {
	if err := c.Send(AppendCommand(nil, args...)); err != nil {
		return "", err
	}
	return c.text()
}

func (c *Conn) text() (string, error) {
	b, err := c.line()
	if err != nil {
		return "", err
	}
	switch b[0] {
	case '+', ':':
		return string(b[1:]), nil
	case '$':
		n, err := atoi(b[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := readFull(c.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := atoi(b[1:])
		if err != nil {
			return "", err
		}
		var out []byte
		for i := int64(0); i < n; i++ {
			s, err := c.text()
			if err != nil {
				return "", err
			}
			if i > 0 {
				out = append(out, ' ')
			}
			out = append(out, s...)
		}
		return string(out), nil
	}
	return "", fmt.Errorf("%w: %q", ErrProtocol, b)
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// AppendCommand appends args as a RESP array of bulk strings.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}

// AppendArrayHeader appends "*n\r\n".
func AppendArrayHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulk appends b as a bulk string.
func AppendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// line reads one reply header line without its CRLF; an error reply is
// returned as a ServerError. The slice is valid until the next read.
func (c *Conn) line() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(b) < 3 || b[len(b)-2] != '\r' {
		return nil, ErrProtocol
	}
	b = b[:len(b)-2]
	if b[0] == '-' {
		return nil, ServerError(b[1:])
	}
	return b, nil
}

// atoi parses a RESP length or integer without allocating.
func atoi(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, ErrProtocol
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, ErrProtocol
		}
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, ErrProtocol
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// header reads a line that must start with kind and returns its number.
func (c *Conn) header(kind byte) (int64, error) {
	b, err := c.line()
	if err != nil {
		return 0, err
	}
	if b[0] != kind {
		return 0, fmt.Errorf("%w: want %q, got %q", ErrProtocol, kind, b)
	}
	return atoi(b[1:])
}

// Integer reads an integer reply.
func (c *Conn) Integer() (int64, error) { return c.header(':') }

// ArrayLen reads an array header; a nil array is -1.
func (c *Conn) ArrayLen() (int, error) {
	n, err := c.header('*')
	return int(n), err
}

// Bulk appends the content of a bulk string reply to dst; ok is false
// for a nil bulk string. It allocates only when dst must grow.
func (c *Conn) Bulk(dst []byte) (out []byte, ok bool, err error) {
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

// FromReader is a Conn that only reads, replies from r: for parsing
// canned replies in tests.
func FromReader(r *bufio.Reader) *Conn { return &Conn{r: r} }

// Skip reads and discards one whole reply of any type.
func (c *Conn) Skip() error {
	_, err := c.SkipCount()
	return err
}

// SkipCount is Skip that also returns the length of a top-level array
// (-1 for a nil array, 0 for other types), so a caller can tell an empty
// read from a full one.
func (c *Conn) SkipCount() (int64, error) {
	b, err := c.line()
	if err != nil {
		return 0, err
	}
	switch b[0] {
	case '+', ':':
		return 0, nil
	case '$':
		n, err := atoi(b[1:])
		if err != nil || n < 0 {
			return 0, err
		}
		_, err = c.r.Discard(int(n) + 2)
		return 0, err
	case '*':
		n, err := atoi(b[1:])
		if err != nil {
			return 0, err
		}
		for i := int64(0); i < n; i++ {
			if _, err := c.SkipCount(); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrProtocol, b)
}
