package server

import (
	"strconv"

	"github.com/tidwall/redcon"
)

// Limits of the request parser, as Redis 7.0 sets them.
const (
	inlineMax       = 64 * 1024 // PROTO_INLINE_MAX_SIZE
	unauthMultibulk = 10        // multibulk length allowed before AUTH
	unauthBulk      = 16384     // bulk length allowed before AUTH
	maxMultibulkLen = 1<<31 - 1 // INT_MAX
	guardKeepBuf    = 64 * 1024 // larger framing buffers are dropped once empty
	guardChunkMin   = 512       // the smallest framing buffer compact allocates
	guardChunkMax   = 32 * 1024 // and the largest, but for a partial request
	guardKeepSpans  = 4096      // larger argument notes are dropped once empty
)

// protoError is a request that breaks the protocol. The client gets
// "ERR Protocol error: <msg>" after the replies to the commands before it,
// and is disconnected.
type protoError struct{ msg string }

func (e *protoError) Error() string { return "Protocol error: " + e.msg }

// guardConn frames a client's request stream: the event loop feeds it
// the bytes it reads, and it follows the RESP framing byte by byte,
// enforcing Redis's limits (proto-max-bulk-len, the limits before AUTH,
// the 64 KB inline and length-line limits) and Redis's leniency (*0 and
// *-1 are skipped, the two bytes after a bulk are not checked). As it
// frames it notes where each argument lies in out, so that the loop takes
// the commands from those notes (takeCommands) and nothing parses a
// request twice.
//
// It is owned by the event loop's thread.
type guardConn struct {
	c *client

	in     []byte // bytes read from the socket, not yet framed
	out    []byte // framed bytes the commands' arguments point into
	outPos int    // out[:outPos] was taken as commands already

	// state of the framing machine
	state   int   // guardStart, guardBulkHeader, guardBulkBody, guardBulkCRLF
	bulks   int   // bulks left in the current multibulk
	argc    int   // bulks of the current multibulk
	bodyLen int64 // bytes left in the current bulk body
	crlf    int   // CRLF bytes left to skip after a bulk body

	// spans holds the arguments of the complete commands, argcs their
	// counts, then those of the command being framed; framedEnd is where
	// in out the last complete command ends.
	spans     []argSpan
	argcs     []int
	framedEnd int
}

// argSpan is an argument's place in guardConn.out: out[off:off+n].
type argSpan struct{ off, n int }

const (
	guardStart = iota
	guardBulkHeader
	guardBulkBody
	guardBulkCRLF
)

// feed frames data just read: straight from the read buffer when no
// partial element waits in in, otherwise after it.
func (g *guardConn) feed(data []byte) error {
	if len(g.in) > 0 {
		g.in = append(g.in, data...)
		data = g.in
	}
	rest, err := g.frame(data)
	// keep the unconsumed tail (it may alias in: copy moves it down)
	n := copy(g.in[:cap(g.in)], rest)
	if n < len(rest) {
		g.in = append(g.in[:n], rest[n:]...)
	} else {
		g.in = g.in[:n]
	}
	if len(g.in) == 0 && cap(g.in) > guardKeepBuf {
		g.in = nil
	}
	return err
}

// frame moves complete protocol elements from in to out and returns what
// is left of in: the start of an element not complete yet.
//
// A well-formed request is handed on as it came, so frame copies runs of
// in to out whole (in[run:p] is checked and not copied yet) and writes
// bytes of its own only where it must differ: an inline request, a
// skipped empty multibulk, a line or bulk end other than CRLF.
func (g *guardConn) frame(in []byte) ([]byte, error) {
	run, p := 0, 0
	for p < len(in) {
		switch g.state {
		case guardStart:
			var wait bool
			var err error
			if run, p, wait, err = g.frameStart(in, run, p); wait || err != nil {
				return g.frameEnd(in, run, p, err)
			}
		case guardBulkHeader:
			if in[p] != '$' {
				return g.frameEnd(in, run, p, &protoError{"expected '$', got '" + string(in[p]) + "'"})
			}
			i := indexCR(in[p:])
			if i < 0 {
				if len(in)-p > inlineMax {
					return g.frameEnd(in, run, p, &protoError{"too big bulk count string"})
				}
				return g.frameEnd(in, run, p, nil)
			}
			if p+i+1 >= len(in) {
				return g.frameEnd(in, run, p, nil)
			}
			n, ok := parseRedisInt(in[p+1 : p+i])
			if !ok || n < 0 || n > g.c.s.maxBulkLen() {
				return g.frameEnd(in, run, p, &protoError{"invalid bulk length"})
			}
			if n > unauthBulk && !g.c.isAuthed() {
				return g.frameEnd(in, run, p, &protoError{"unauthenticated bulk length"})
			}
			if in[p+i+1] != '\n' {
				g.out = append(g.out, in[run:p+i+1]...)
				g.out = append(g.out, '\n')
				run = p + i + 2
			}
			p += i + 2
			// The body starts at p: in out, after what is copied
			// already and the run up to p.
			g.spans = append(g.spans, argSpan{off: len(g.out) + p - run, n: int(n)})
			g.bodyLen = n
			g.state = guardBulkBody
			if n == 0 {
				g.crlf, g.state = 2, guardBulkCRLF
			}
		case guardBulkBody:
			if end := p + int(g.bodyLen); g.bodyLen <= int64(len(in)-p-2) && in[end] == '\r' && in[end+1] == '\n' {
				// The whole body and a plain CRLF are here, as in nearly
				// every request: past both at once, with nothing to copy.
				p = end + 2
				g.bodyLen = 0
				g.endBulk(len(g.out) + p - run)
				continue
			}
			k := int64(len(in) - p)
			if k > g.bodyLen {
				k = g.bodyLen
			}
			p += int(k)
			g.bodyLen -= k
			if g.bodyLen == 0 {
				g.crlf = 2
				g.state = guardBulkCRLF
			}
		case guardBulkCRLF:
			run, p = g.frameBulkCRLF(in, run, p)
		}
	}
	return g.frameEnd(in, run, p, nil)
}

// frameStart frames the start of a request at in[p]: an inline request
// whole, or a multibulk's count line. in[run:p] is checked and not copied
// to out yet; it returns the new run and p, and wait when the element is
// not complete yet. Once a request, so out of frame's loop.
func (g *guardConn) frameStart(in []byte, run, p int) (int, int, bool, error) {
	if in[p] != '*' {
		i := indexNL(in[p:])
		if i < 0 {
			if len(in)-p > inlineMax {
				return run, p, false, &protoError{"too big inline request"}
			}
			return run, p, true, nil
		}
		g.out = append(g.out, in[run:p]...)
		line := in[p : p+i]
		p += i + 1
		return p, p, false, g.inline(line)
	}
	i := indexCR(in[p:])
	if i < 0 {
		if len(in)-p > inlineMax {
			return run, p, false, &protoError{"too big mbulk count string"}
		}
		return run, p, true, nil
	}
	if p+i+1 >= len(in) {
		return run, p, true, nil // wait for the \n
	}
	n, ok := parseRedisInt(in[p+1 : p+i])
	if !ok || n > maxMultibulkLen {
		return run, p, false, &protoError{"invalid multibulk length"}
	}
	if n > unauthMultibulk && !g.c.isAuthed() {
		return run, p, false, &protoError{"unauthenticated multibulk length"}
	}
	end := p + i + 2
	switch {
	case n <= 0:
		// Redis skips empty and null multibulks.
		g.out = append(g.out, in[run:p]...)
		run = end
	case in[p+i+1] != '\n':
		// Redis does not look at the byte after the \r.
		g.out = append(g.out, in[run:p+i+1]...)
		g.out = append(g.out, '\n')
		run = end
		g.bulks, g.argc, g.state = int(n), int(n), guardBulkHeader
	default:
		g.bulks, g.argc, g.state = int(n), int(n), guardBulkHeader
	}
	return run, end, false, nil
}

// frameBulkCRLF passes over one of the two bytes after a bulk's body
// that frame's fast path did not: Redis skips them without looking, and
// what is framed always has CRLF there.
func (g *guardConn) frameBulkCRLF(in []byte, run, p int) (int, int) {
	want := byte('\r')
	if g.crlf == 1 {
		want = '\n'
	}
	if in[p] != want {
		g.out = append(g.out, in[run:p]...)
		g.out = append(g.out, want)
		run = p + 1
	}
	p++
	g.crlf--
	if g.crlf == 0 {
		g.endBulk(len(g.out) + p - run)
	}
	return run, p
}

// endBulk moves on from a bulk whose CRLF was just passed; framed is
// where the bytes framed so far will end in out, once the pending run is
// copied.
func (g *guardConn) endBulk(framed int) {
	g.bulks--
	if g.bulks > 0 {
		g.state = guardBulkHeader
		return
	}
	g.state = guardStart
	g.argcs = append(g.argcs, g.argc)
	g.framedEnd = framed
}

// frameEnd copies the run still pending and returns in from p on.
func (g *guardConn) frameEnd(in []byte, run, p int, err error) ([]byte, error) {
	g.out = append(g.out, in[run:p]...)
	return in[p:], err
}

// inline turns an inline request into a multibulk, splitting it as
// Redis's sdssplitargs does (quotes, \xHH and the other escapes); a C
// string ends at its first NUL.
func (g *guardConn) inline(line []byte) error {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	for i, ch := range line {
		if ch == 0 {
			line = line[:i]
			break
		}
	}
	args, err := splitConfigArgs(string(line))
	if err != nil {
		return &protoError{"unbalanced quotes in request"}
	}
	if len(args) == 0 {
		return nil
	}
	g.out = append(g.out, '*')
	g.out = strconv.AppendInt(g.out, int64(len(args)), 10)
	g.out = append(g.out, '\r', '\n')
	for _, a := range args {
		g.out = append(g.out, '$')
		g.out = strconv.AppendInt(g.out, int64(len(a)), 10)
		g.out = append(g.out, '\r', '\n')
		g.spans = append(g.spans, argSpan{off: len(g.out), n: len(a)})
		g.out = append(g.out, a...)
		g.out = append(g.out, '\r', '\n')
	}
	g.argcs = append(g.argcs, len(args))
	g.framedEnd = len(g.out)
	return nil
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

func indexCR(b []byte) int {
	for i, c := range b {
		if c == '\r' {
			return i
		}
	}
	return -1
}

// takeCommands appends the complete commands framed so far to cmds,
// their arguments carved from args (an arena: a command's arguments are
// args[i:j:j], and args grows by replacement, never reallocation of what
// was handed out), and marks their bytes handed out. It returns both.
func (g *guardConn) takeCommands(cmds []redcon.Command, args [][]byte) ([]redcon.Command, [][]byte) {
	k := 0
	for _, argc := range g.argcs {
		if cap(args)-len(args) < argc {
			// A command may keep its arguments (MULTI's queue), so the
			// arena is replaced, not reused: one allocation for many
			// commands instead of one each.
			args = make([][]byte, 0, max(512, argc))
		}
		start := len(args)
		for _, sp := range g.spans[k : k+argc] {
			args = append(args, g.out[sp.off:sp.off+sp.n:sp.off+sp.n])
		}
		k += argc
		cmds = append(cmds, redcon.Command{Args: args[start:len(args):len(args)]})
	}
	if len(g.argcs) > 0 {
		n := copy(g.spans, g.spans[k:])
		g.spans = g.spans[:n]
		g.argcs = g.argcs[:0]
		g.outPos = g.framedEnd
		if n == 0 && cap(g.spans) > guardKeepSpans {
			// A huge request's notes: an idle client keeps no large array.
			g.spans, g.argcs = nil, nil
		}
	}
	return cmds, args
}

// compact drops the framed bytes the event loop has parsed and run,
// keeping a partial request. The commands' arguments point into out, and
// a command may keep them (MULTI's queue, a blocked command), so out is
// never written over: the next bytes go after them, in what is left of
// out's array, and when too little is left, in a new one. The new one is
// sized for several reads like this one, so a client's requests cost an
// allocation per few reads, not one per read; an idle client keeps at
// most guardChunkMax.
func (g *guardConn) compact() {
	if g.outPos == 0 {
		return
	}
	used := g.outPos
	g.out, g.outPos = g.out[g.outPos:], 0
	g.framedEnd -= used
	for i := range g.spans {
		g.spans[i].off -= used // what is left: the partial command's
	}
	if cap(g.out)-len(g.out) >= used && cap(g.out) <= guardKeepBuf {
		return
	}
	size := max(min(4*used, guardChunkMax), guardChunkMin, 2*len(g.out))
	g.out = append(make([]byte, 0, size), g.out...)
}
