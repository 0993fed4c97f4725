package server

import (
	"math"
	"slices"
	"strconv"

	"github.com/eddy-streams/eddy/stream"
)

// replyWriter accumulates RESP replies for one client. proto is 2 or 3
// (HELLO); the RESP3-only types fall back to their RESP2 shapes exactly
// as Redis 7.0 does.
type replyWriter struct {
	buf   []byte
	proto int

	// errs counts error replies written (the dispatcher compares it around
	// a handler to tell failed calls); stats, when set, also counts them by
	// error code for INFO errorstats.
	errs  int
	stats *serverStats
}

// Simple writes a status reply (+OK).
func (w *replyWriter) Simple(s string) {
	w.buf = append(w.buf, '+')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Error writes an error reply; s is the whole text after '-' ("ERR ...").
// CR and LF, which an echoed argument may carry, become spaces so that
// the reply stays one line (as Redis's addReplyErrorFormat does).
func (w *replyWriter) Error(s string) {
	s = sanitizeError(s)
	w.errs++
	if w.stats != nil {
		w.stats.countError(s)
	}
	w.buf = append(w.buf, '-')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Int writes an integer reply.
func (w *replyWriter) Int(n int64) {
	w.buf = append(w.buf, ':')
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, '\r', '\n')
}

// Bulk writes a bulk string.
func (w *replyWriter) Bulk(b []byte) {
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(b)), 10)
	w.buf = append(w.buf, '\r', '\n')
	w.buf = append(w.buf, b...)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes a bulk string from a Go string.
func (w *replyWriter) BulkString(s string) {
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(s)), 10)
	w.buf = append(w.buf, '\r', '\n')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Null writes a null bulk string ($-1 in RESP2, _ in RESP3).
func (w *replyWriter) Null() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "$-1\r\n"...)
}

// NullArray writes a null array (*-1 in RESP2, _ in RESP3).
func (w *replyWriter) NullArray() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "*-1\r\n"...)
}

func (w *replyWriter) header(c byte, n int) {
	w.buf = append(w.buf, c)
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	w.buf = append(w.buf, '\r', '\n')
}

// Array starts an array of n elements.
func (w *replyWriter) Array(n int) { w.header('*', n) }

// Map starts a map of n key-value pairs (a flat array of 2n in RESP2).
func (w *replyWriter) Map(n int) {
	if w.proto == 3 {
		w.header('%', n)
		return
	}
	w.header('*', 2*n)
}

// Set starts a set of n elements (an array in RESP2).
func (w *replyWriter) Set(n int) {
	if w.proto == 3 {
		w.header('~', n)
		return
	}
	w.header('*', n)
}

// Push starts an out-of-band push of n elements (an array in RESP2).
func (w *replyWriter) Push(n int) {
	if w.proto == 3 {
		w.header('>', n)
		return
	}
	w.header('*', n)
}

// Bool writes a boolean (#t/#f in RESP3, :1/:0 in RESP2).
func (w *replyWriter) Bool(b bool) {
	if w.proto == 3 {
		if b {
			w.buf = append(w.buf, "#t\r\n"...)
		} else {
			w.buf = append(w.buf, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Double writes a double (,f in RESP3, a bulk string in RESP2), formatted
// as Redis formats doubles (%.17g, inf, -inf).
func (w *replyWriter) Double(f float64) {
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = []byte("inf")
	case math.IsInf(f, -1):
		s = []byte("-inf")
	default:
		s = strconv.AppendFloat(nil, f, 'g', 17, 64)
	}
	if w.proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(s)
}

// Verbatim writes a verbatim string (=len\r\ntxt:... in RESP3, a bulk
// string in RESP2), as INFO and CLIENT INFO reply.
func (w *replyWriter) Verbatim(s string) {
	if w.proto == 3 {
		w.header('=', len(s)+4)
		w.buf = append(w.buf, "txt:"...)
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// ID writes a stream ID as a bulk string.
func (w *replyWriter) ID(id stream.ID) {
	var tmp [42]byte
	w.Bulk(id.Append(tmp[:0]))
}

// Entry writes one stream entry: [id, [field, value, ...]].
func (w *replyWriter) Entry(e stream.Entry) {
	w.Array(2)
	w.ID(e.ID)
	w.Array(len(e.Fields))
	for _, f := range e.Fields {
		w.Bulk(f)
	}
}

// Entries writes an array of stream entries.
func (w *replyWriter) Entries(es []stream.Entry) {
	w.Array(len(es))
	for _, e := range es {
		w.Entry(e)
	}
}

// insertArrayHeader inserts the header of an n-element array at offset
// at of the buffer, in front of elements already written.
func (w *replyWriter) insertArrayHeader(at, n int) {
	var tmp [24]byte
	h := append(tmp[:0], '*')
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	w.buf = slices.Insert(w.buf, at, h...)
}

// Raw appends bytes already in RESP form.
func (w *replyWriter) Raw(b []byte) { w.buf = append(w.buf, b...) }
