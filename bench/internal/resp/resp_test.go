package resp

import (
	"errors"
	"net"
	"testing"
	"time"
)

// pipeConn returns a Conn whose server side answers each command it
// reads with the next canned reply.
func pipeConn(t *testing.T, replies ...string) *Conn {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close(); server.Close() })
	go func() {
		buf := make([]byte, 4096)
		for _, r := range replies {
			if _, err := server.Read(buf); err != nil {
				return
			}
			if _, err := server.Write([]byte(r)); err != nil {
				return
			}
		}
	}()
	c := &Conn{nc: client}
	c.r, c.w = newBufs(client)
	client.SetDeadline(time.Now().Add(5 * time.Second))
	return c
}

func TestCommand(t *testing.T) {
	tests := []struct {
		reply   string
		want    string
		wantErr string
	}{
		{"+PONG\r\n", "PONG", ""},
		{":42\r\n", "42", ""},
		{"$5\r\nhello\r\n", "hello", ""},
		{"$-1\r\n", "", ""},
		{"*2\r\n$1\r\na\r\n*1\r\n:3\r\n", "a 3", ""},
		{"-LOADING Redis is loading\r\n", "", "LOADING Redis is loading"},
		{"?\r\n", "", "a protocol error"},
	}
	for _, tt := range tests {
		c := pipeConn(t, tt.reply)
		got, err := c.Command("X")
		if tt.wantErr != "" {
			var se ServerError
			ok := errors.As(err, &se) && string(se) == tt.wantErr
			if tt.reply[0] != '-' {
				ok = errors.Is(err, ErrProtocol)
			}
			if !ok {
				t.Errorf("reply %q: error %v, want %q", tt.reply, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("reply %q: %q, %v; want %q", tt.reply, got, err, tt.want)
		}
	}
}

func TestSkipCount(t *testing.T) {
	tests := []struct {
		reply string
		want  int64
	}{
		{"*-1\r\n", -1},
		{"*0\r\n", 0},
		{"*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n1-2\r\n*-1\r\n", 2},
		{"$3\r\nabc\r\n", 0},
	}
	for _, tt := range tests {
		c := pipeConn(t, tt.reply+"+OK\r\n")
		if err := c.Send(AppendCommand(nil, "X")); err != nil {
			t.Fatal(err)
		}
		n, err := c.SkipCount()
		if err != nil || n != tt.want {
			t.Errorf("reply %q: %d, %v; want %d", tt.reply, n, err, tt.want)
		}
		// The whole reply was consumed: what follows is the next one.
		if s, err := c.text(); err != nil || s != "OK" {
			t.Errorf("reply %q: next reply %q, %v; want OK", tt.reply, s, err)
		}
	}
}
