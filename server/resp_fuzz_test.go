package server

import (
	"bytes"
	"slices"
	"strconv"
	"testing"

	"github.com/tidwall/redcon"
)

// testGuard is the request guard of an authenticated client of a server
// that takes bulks up to 1 MB.
func testGuard() *guardConn {
	s := &Server{}
	s.protoMaxBulk.Store(1 << 20)
	c := &client{s: s}
	c.authed.Store(true)
	return &guardConn{c: c}
}

// frameAll runs the request guard over data delivered in the given chunks
// and returns what it hands to redcon and the protocol error, if any.
func frameAll(chunks ...[]byte) ([]byte, error) {
	g := testGuard()
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

// takeAll frames chunks as the event loop does: after each read it takes
// the complete commands (takeCommands) and compacts the framing buffer.
// It stops at a protocol error, with the commands taken before it.
func takeAll(chunks ...[]byte) []redcon.Command {
	g := testGuard()
	var cmds []redcon.Command
	var args [][]byte
	for _, ch := range chunks {
		err := g.feed(ch)
		cmds, args = g.takeCommands(cmds, args)
		g.compact()
		if err != nil {
			break
		}
	}
	return cmds
}

// parseAll parses framed bytes with redcon's parser, as the guard's
// attached reader does: the complete commands, in order.
func parseAll(framed []byte) []redcon.Command {
	var cmds []redcon.Command
	for len(framed) > 0 {
		complete, args, _, rest, err := redcon.ReadNextCommand(framed, nil)
		if err != nil || !complete {
			break
		}
		if len(args) > 0 {
			cmds = append(cmds, redcon.Command{Args: args})
		}
		framed = rest
	}
	return cmds
}

// frameAllByByte is frameAll through frameByByte.
func frameAllByByte(chunks ...[]byte) ([]byte, error) {
	g := testGuard()
	var pending []byte
	for _, ch := range chunks {
		rest, err := g.frameByByte(append(pending, ch...))
		if err != nil {
			return g.out, err
		}
		pending = append([]byte(nil), rest...)
	}
	return g.out, nil
}

// FuzzRequestFraming: the guard never panics, how the bytes arrive (one
// read or two, split anywhere) changes neither what it hands on nor
// whether it refuses the stream, and it hands on what the plain
// element-by-element framing does.
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
		"*2\rx$1\r\na\r\n$0\ry\nz",
		"*1\r\n$3\r\nabcXY*1\r\n$1\r\nb\n\n",
		"*3\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
		// Cut in half, a command then half of one, whose first argument
		// is noted before the framing buffer is compacted.
		"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n",
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
		plain, perr := frameAllByByte(data[:cut], data[cut:])
		if (perr == nil) != (serr == nil) || (perr != nil && perr.Error() != serr.Error()) {
			t.Fatalf("split at %d: %v, by byte %v", cut, serr, perr)
		}
		if !bytes.Equal(split, plain) {
			t.Fatalf("split at %d: framed\n%q\nby byte\n%q", cut, split, plain)
		}
		// The commands the event loop takes from the guard's notes are
		// those redcon parses from the framed bytes, and stay intact
		// through the reads after them.
		taken, parsed := takeAll(data[:cut], data[cut:]), parseAll(split)
		if len(taken) != len(parsed) {
			t.Fatalf("split at %d: took %d commands, parsed %d", cut, len(taken), len(parsed))
		}
		for i := range taken {
			if !slices.EqualFunc(taken[i].Args, parsed[i].Args, bytes.Equal) {
				t.Fatalf("split at %d, command %d: took %q, parsed %q", cut, i, taken[i].Args, parsed[i].Args)
			}
		}
	})
}

// frameByByte is the guard's framing written the plain way, one element
// appended at a time: the reference FuzzRequestFraming holds frame to.
func (g *guardConn) frameByByte(in []byte) ([]byte, error) {
	for len(in) > 0 {
		switch g.state {
		case guardStart:
			if in[0] != '*' {
				i := indexNL(in)
				if i < 0 {
					if len(in) > inlineMax {
						return in, &protoError{"too big inline request"}
					}
					return in, nil
				}
				line := in[:i]
				in = in[i+1:]
				if err := g.inline(line); err != nil {
					return in, err
				}
				continue
			}
			i := indexCR(in)
			if i < 0 {
				if len(in) > inlineMax {
					return in, &protoError{"too big mbulk count string"}
				}
				return in, nil
			}
			if i+1 >= len(in) {
				return in, nil // wait for the \n
			}
			n, ok := parseRedisInt(in[1:i])
			if !ok || n > maxMultibulkLen {
				return in, &protoError{"invalid multibulk length"}
			}
			if n > unauthMultibulk && !g.c.isAuthed() {
				return in, &protoError{"unauthenticated multibulk length"}
			}
			in = in[i+2:]
			if n <= 0 {
				continue // Redis skips empty and null multibulks
			}
			g.out = append(g.out, '*')
			g.out = strconv.AppendInt(g.out, n, 10)
			g.out = append(g.out, '\r', '\n')
			g.bulks = int(n)
			g.state = guardBulkHeader
		case guardBulkHeader:
			if in[0] != '$' {
				return in, &protoError{"expected '$', got '" + string(in[0]) + "'"}
			}
			i := indexCR(in)
			if i < 0 {
				if len(in) > inlineMax {
					return in, &protoError{"too big bulk count string"}
				}
				return in, nil
			}
			if i+1 >= len(in) {
				return in, nil
			}
			n, ok := parseRedisInt(in[1:i])
			if !ok || n < 0 || n > g.c.s.maxBulkLen() {
				return in, &protoError{"invalid bulk length"}
			}
			if n > unauthBulk && !g.c.isAuthed() {
				return in, &protoError{"unauthenticated bulk length"}
			}
			in = in[i+2:]
			g.out = append(g.out, '$')
			g.out = strconv.AppendInt(g.out, n, 10)
			g.out = append(g.out, '\r', '\n')
			g.bodyLen = n
			g.state = guardBulkBody
		case guardBulkBody:
			k := int64(len(in))
			if k > g.bodyLen {
				k = g.bodyLen
			}
			g.out = append(g.out, in[:k]...)
			in = in[k:]
			g.bodyLen -= k
			if g.bodyLen == 0 {
				g.crlf = 2
				g.state = guardBulkCRLF
			}
		case guardBulkCRLF:
			// Redis skips the two bytes after a bulk without looking;
			// each is handed on as the CRLF byte it stands for.
			g.out = append(g.out, "\r\n"[2-g.crlf])
			in = in[1:]
			g.crlf--
			if g.crlf == 0 {
				g.bulks--
				if g.bulks == 0 {
					g.state = guardStart
				} else {
					g.state = guardBulkHeader
				}
			}
		}
	}
	return in, nil
}

// TestGuardDropsLargeNotes: the argument notes of a huge request are
// not kept once its command is taken; a small one's are.
func TestGuardDropsLargeNotes(t *testing.T) {
	for _, tc := range []struct {
		args int
		kept bool
	}{{3, true}, {guardKeepSpans + 1, false}} {
		g := testGuard()
		req := []byte("*" + strconv.Itoa(tc.args) + "\r\n")
		for range tc.args {
			req = append(req, "$1\r\nx\r\n"...)
		}
		if err := g.feed(req); err != nil {
			t.Fatal(err)
		}
		cmds, _ := g.takeCommands(nil, nil)
		if len(cmds) != 1 || len(cmds[0].Args) != tc.args {
			t.Fatalf("%d arguments: took %d commands", tc.args, len(cmds))
		}
		if kept := cap(g.spans) > 0; kept != tc.kept {
			t.Errorf("%d arguments: notes kept %v, want %v", tc.args, kept, tc.kept)
		}
	}
}
