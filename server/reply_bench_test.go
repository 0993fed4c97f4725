package server

import (
	"strconv"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

// benchEntries returns n XADD-shaped entries (three fields, about 60
// bytes), with consecutive IDs near today's milliseconds.
func benchEntries(n int) []stream.Entry {
	es := make([]stream.Entry, n)
	for i := range es {
		es[i] = stream.Entry{
			ID: stream.ID{Ms: 1700000000000 + uint64(i), Seq: uint64(i % 3)},
			Fields: [][]byte{
				[]byte("event"), []byte("page_view"),
				[]byte("user"), []byte("user:" + strconv.Itoa(100000+i)),
				[]byte("path"), []byte("/products/7919?ref=home"),
			},
		}
	}
	return es
}

// BenchmarkReplyEntries writes an XRANGE reply of COUNT 1, 10 and 100
// entries into a reused buffer, as a connection does; the wire bytes per
// op are reported as MB/s.
func BenchmarkReplyEntries(b *testing.B) {
	// Entries are arrays in RESP2 and RESP3 alike, so one protocol.
	for _, n := range []int{1, 10, 100} {
		b.Run("count="+strconv.Itoa(n), func(b *testing.B) {
			es := benchEntries(n)
			w := &replyWriter{proto: 2}
			w.Entries(es)
			b.SetBytes(int64(len(w.buf)))
			b.ReportAllocs()
			for b.Loop() {
				w.buf = w.buf[:0]
				w.Entries(es)
			}
		})
	}
}

func BenchmarkReplyBulk(b *testing.B) {
	for _, size := range []int{8, 64, 1024} {
		b.Run("bytes="+strconv.Itoa(size), func(b *testing.B) {
			v := make([]byte, size)
			w := &replyWriter{proto: 2}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				w.buf = w.buf[:0]
				w.Bulk(v)
			}
		})
	}
}

func BenchmarkReplyInt(b *testing.B) {
	for _, n := range []int64{1, 1234567, -9223372036854775808} {
		b.Run(strconv.FormatInt(n, 10), func(b *testing.B) {
			w := &replyWriter{proto: 2}
			b.ReportAllocs()
			for b.Loop() {
				w.buf = w.buf[:0]
				w.Int(n)
			}
		})
	}
}

func BenchmarkReplyID(b *testing.B) {
	w := &replyWriter{proto: 2}
	id := stream.ID{Ms: 1700000000123, Seq: 42}
	b.ReportAllocs()
	for b.Loop() {
		w.buf = w.buf[:0]
		w.ID(id)
	}
}
