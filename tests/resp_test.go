package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawConn is a RESP client that hands back the exact bytes of each reply.
// go-redis decodes replies into Go values, which hides the differences the
// byte-for-byte tests are after (a status reply versus a bulk string, "*0"
// versus "*-1", RESP3 types); rawConn only finds where a reply ends.
type rawConn struct {
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration // read deadline for each reply
}

// defaultReplyTimeout bounds every read so that a server that never answers
// fails the test instead of hanging it.
const defaultReplyTimeout = 15 * time.Second

// dialRaw connects to addr; the connection is closed when t ends.
func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	rc := &rawConn{conn: c, r: bufio.NewReader(c), timeout: defaultReplyTimeout}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// Close closes the connection; closing twice is harmless.
func (c *rawConn) Close() error { return c.conn.Close() }

// Send writes one command as a RESP array of bulk strings without waiting
// for the reply, so that several can be pipelined before Read.
func (c *rawConn) Send(args ...string) error {
	return c.SendRaw(encodeCommand(args))
}

// SendRaw writes b as is: inline commands and malformed input.
func (c *rawConn) SendRaw(b []byte) error {
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.conn.Write(b)
	return err
}

// Read returns the exact bytes of the next complete reply.
func (c *rawConn) Read() ([]byte, error) {
	return c.ReadTimeout(c.timeout)
}

// ReadTimeout is Read with its own deadline, for replies that are meant to
// take a while (blocking commands).
func (c *rawConn) ReadTimeout(d time.Duration) ([]byte, error) {
	if err := c.conn.SetReadDeadline(time.Now().Add(d)); err != nil {
		return nil, err
	}
	return readReply(c.r, nil)
}

// Do sends one command and returns the exact bytes of its reply.
func (c *rawConn) Do(args ...string) ([]byte, error) {
	if err := c.Send(args...); err != nil {
		return nil, err
	}
	return c.Read()
}

// WaitClosed reports whether the server closes the connection within d:
// it reads until EOF (or a reset), and fails if a reply arrives instead.
func (c *rawConn) WaitClosed(d time.Duration) error {
	if err := c.conn.SetReadDeadline(time.Now().Add(d)); err != nil {
		return err
	}
	var buf [512]byte
	n, err := c.r.Read(buf[:])
	switch {
	case n > 0:
		return fmt.Errorf("expected the connection to be closed, read %q", buf[:n])
	case errors.Is(err, io.EOF), isConnReset(err):
		return nil
	case err == nil:
		return errors.New("expected the connection to be closed, read nothing")
	default:
		return fmt.Errorf("expected the connection to be closed: %w", err)
	}
}

func isConnReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// encodeCommand renders args the way clients send commands.
func encodeCommand(args []string) []byte {
	b := make([]byte, 0, 16*len(args)+16)
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// readReply appends one complete RESP2 or RESP3 reply to dst, byte for byte.
// It understands every type Redis 7.0 can send so that it knows where the
// reply ends: simple ones on one line (+ - : _ , # ( ), those with a length
// and a payload ($ ! =), aggregates (* ~ > with n items, % with n pairs) and
// attributes (| with n pairs, followed by the reply they describe).
func readReply(r *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return dst, fmt.Errorf("reply header longer than %d bytes", r.Size())
		}
		if len(line) > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return dst, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return dst, fmt.Errorf("malformed reply line %q", line)
	}
	dst = append(dst, line...)
	typ, body := line[0], string(line[1:len(line)-2])
	switch typ {
	case '+', '-', ':', '_', ',', '#', '(':
		return dst, nil
	case '$', '!', '=':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || (n == -1 && typ != '$') {
			return dst, fmt.Errorf("bad length in %q", line)
		}
		if n == -1 {
			return dst, nil
		}
		start := len(dst)
		dst = append(dst, make([]byte, n+2)...)
		if _, err := io.ReadFull(r, dst[start:]); err != nil {
			return dst, fmt.Errorf("reading %d-byte payload: %w", n, err)
		}
		if !bytes.HasSuffix(dst, []byte("\r\n")) {
			return dst, fmt.Errorf("payload of %q not terminated by CRLF", line)
		}
		return dst, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || (n == -1 && typ != '*') {
			return dst, fmt.Errorf("bad count in %q", line)
		}
		if typ == '%' || typ == '|' {
			n *= 2
		}
		for range n {
			if dst, err = readReply(r, dst); err != nil {
				return dst, err
			}
		}
		if typ == '|' {
			return readReply(r, dst)
		}
		return dst, nil
	default:
		return dst, fmt.Errorf("unknown reply type %q", line)
	}
}

// respValue is a decoded reply, for the few comparisons that cannot be byte
// for byte (sorting KEYS, following SCAN cursors, reading TTLs).
type respValue struct {
	typ   byte        // the RESP type byte
	str   string      // line content, or payload of $ ! =
	null  bool        // $-1 or *-1
	elems []respValue // items of * ~ > and flattened pairs of % |
}

// parseReply decodes one reply from the start of b.
func parseReply(b []byte) (respValue, error) {
	v, rest, err := parseValue(b)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d trailing bytes after reply", len(rest))
	}
	return v, err
}

func parseValue(b []byte) (respValue, []byte, error) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return respValue{}, nil, fmt.Errorf("malformed reply %q", b)
	}
	v := respValue{typ: b[0], str: string(b[1:i])}
	rest := b[i+2:]
	switch v.typ {
	case '$', '!', '=':
		n, err := strconv.Atoi(v.str)
		if err != nil {
			return v, nil, err
		}
		if n < 0 {
			v.null, v.str = true, ""
			return v, rest, nil
		}
		if len(rest) < n+2 {
			return v, nil, errors.New("short payload")
		}
		v.str, rest = string(rest[:n]), rest[n+2:]
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(v.str)
		if err != nil {
			return v, nil, err
		}
		if n < 0 {
			v.null = true
			return v, rest, nil
		}
		if v.typ == '%' || v.typ == '|' {
			n *= 2
		}
		for range n {
			var e respValue
			if e, rest, err = parseValue(rest); err != nil {
				return v, nil, err
			}
			v.elems = append(v.elems, e)
		}
	}
	return v, rest, nil
}

// appendValue renders v back into RESP; parse then render gives back the
// original bytes (attributes aside, which the tests never ask for).
func appendValue(dst []byte, v respValue) []byte {
	switch v.typ {
	case '$', '!', '=':
		if v.null {
			return append(dst, v.typ, '-', '1', '\r', '\n')
		}
		dst = append(dst, v.typ)
		dst = strconv.AppendInt(dst, int64(len(v.str)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, v.str...)
		return append(dst, "\r\n"...)
	case '*', '~', '>', '%', '|':
		if v.null {
			return append(dst, v.typ, '-', '1', '\r', '\n')
		}
		n := len(v.elems)
		if v.typ == '%' || v.typ == '|' {
			n /= 2
		}
		dst = append(dst, v.typ)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, "\r\n"...)
		for _, e := range v.elems {
			dst = appendValue(dst, e)
		}
		return dst
	default:
		dst = append(dst, v.typ)
		dst = append(dst, v.str...)
		return append(dst, "\r\n"...)
	}
}

// formatReply renders a reply for humans, redis-cli style, one item per
// line, so that a failing diff can be read without decoding RESP by eye.
func formatReply(b []byte) string {
	v, err := parseReply(b)
	if err != nil {
		return fmt.Sprintf("(unparsable: %v)", err)
	}
	var sb strings.Builder
	formatValue(&sb, v, "")
	return strings.TrimSuffix(sb.String(), "\n")
}

func formatValue(sb *strings.Builder, v respValue, indent string) {
	switch {
	case v.null:
		sb.WriteString("(nil)\n")
	case v.typ == '+':
		sb.WriteString(v.str + "\n")
	case v.typ == '-' || v.typ == '!':
		sb.WriteString("(error) " + v.str + "\n")
	case v.typ == ':':
		sb.WriteString("(integer) " + v.str + "\n")
	case v.typ == '_':
		sb.WriteString("(null)\n")
	case v.typ == ',':
		sb.WriteString("(double) " + v.str + "\n")
	case v.typ == '#':
		sb.WriteString("(boolean) " + v.str + "\n")
	case v.typ == '(':
		sb.WriteString("(big number) " + v.str + "\n")
	case v.typ == '$' || v.typ == '=':
		sb.WriteString(strconv.Quote(v.str) + "\n")
	default:
		kind := map[byte]string{'*': "array", '~': "set", '>': "push", '%': "map", '|': "attribute"}[v.typ]
		n := len(v.elems)
		if v.typ == '%' || v.typ == '|' {
			n /= 2
		}
		fmt.Fprintf(sb, "(%s of %d)\n", kind, n)
		for i, e := range v.elems {
			fmt.Fprintf(sb, "%s  %d) ", indent, i+1)
			formatValue(sb, e, indent+"  ")
		}
	}
}

// TestReadReply checks the reply framer on every RESP type, including
// payloads that contain CRLF and nested aggregates.
func TestReadReply(t *testing.T) {
	t.Parallel()
	replies := []string{
		"+OK\r\n",
		"-ERR no\r\n",
		":-12\r\n",
		"$-1\r\n",
		"$0\r\n\r\n",
		"$4\r\na\r\nb\r\n",
		"*-1\r\n",
		"*0\r\n",
		"*2\r\n$1\r\na\r\n*1\r\n:1\r\n",
		"_\r\n",
		",3.14\r\n",
		"#t\r\n",
		"(12345678901234567890\r\n",
		"!5\r\nERR x\r\n",
		"=7\r\ntxt:abc\r\n",
		"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n_\r\n",
		"~2\r\n+a\r\n+b\r\n",
		">2\r\n+message\r\n+x\r\n",
		"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",
	}
	for _, want := range replies {
		// Two replies back to back: the first must end exactly where it should.
		r := bufio.NewReader(strings.NewReader(want + "+NEXT\r\n"))
		got, err := readReply(r, nil)
		if err != nil || string(got) != want {
			t.Errorf("readReply(%q) = %q, %v", want, got, err)
			continue
		}
		if next, err := readReply(r, nil); err != nil || string(next) != "+NEXT\r\n" {
			t.Errorf("after %q: next reply %q, %v", want, next, err)
		}
		if want[0] == '|' {
			continue // attributes are not rendered back
		}
		v, err := parseReply([]byte(want))
		if err != nil {
			t.Errorf("parseReply(%q): %v", want, err)
			continue
		}
		if back := string(appendValue(nil, v)); back != want {
			t.Errorf("parse+render of %q = %q", want, back)
		}
	}
	for _, bad := range []string{"", "+OK", "$3\r\nab", "*2\r\n:1\r\n", "?x\r\n", "$x\r\n"} {
		if got, err := readReply(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("readReply(%q) = %q, want an error", bad, got)
		}
	}
}
