package server

import (
	"bytes"
	"testing"
)

// frameAll runs the request guard over data delivered in the given chunks
// and returns what it hands to redcon and the protocol error, if any.
func frameAll(chunks ...[]byte) ([]byte, error) {
	s := &Server{}
	s.protoMaxBulk.Store(1 << 20)
	c := &client{s: s}
	c.authed.Store(true)
	g := &guardConn{c: c}
	var out []byte
	for _, ch := range chunks {
		if err := g.feed(ch); err != nil {
			return append(out, g.out...), err
		}
		out = append(out, g.out...)
		g.out = g.out[:0]
	}
	return out, nil
}

// FuzzRequestFraming: the guard never panics, and how the bytes arrive
// (one read or two, split anywhere) changes neither what it hands on nor
// whether it refuses the stream.
func FuzzRequestFraming(f *testing.F) {
	seeds := []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n",
		"PING\r\nECHO \"a b\"\r\n",
		"*1\r\n$abc\r\n",
		"*2\r\n$99999999999\r\n",
		"*0\r\n*-1\r\n*1\r\n$0\r\n\r\n",
		"SET k 'v\\x41'\r\n",
		"*1\r\n:1\r\n",
	}
	for _, s := range seeds {
		for _, cut := range []int{0, 1, len(s) / 2, len(s) - 1} {
			f.Add([]byte(s), cut)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if cut < 0 || cut > len(data) {
			cut = len(data) / 2
		}
		whole, werr := frameAll(data)
		split, serr := frameAll(data[:cut], data[cut:])
		if (werr == nil) != (serr == nil) || (werr != nil && werr.Error() != serr.Error()) {
			t.Fatalf("split at %d changed the verdict: %v vs %v", cut, werr, serr)
		}
		if werr == nil && !bytes.Equal(whole, split) {
			t.Fatalf("split at %d changed the framed bytes:\n%q\n%q", cut, whole, split)
		}
	})
}
