package server

import (
	"strings"
	"testing"

	"github.com/tidwall/redcon"
)

// BenchmarkRequestPath takes a pipeline of 16 requests through what the
// event loop does before a command runs: the guard frames the bytes read
// and notes the arguments, the loop takes the commands (takeCommands),
// and each is looked up (groupable, as serveReady does). One op is one
// request; the request bytes per op are reported as MB/s.
func BenchmarkRequestPath(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{
		{"XADD", "*5\r\n$4\r\nXADD\r\n$7\r\nbench:p\r\n$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{"xlen", "*2\r\n$4\r\nxlen\r\n$7\r\nbench:s\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, e := openMemEngine(b)
			s, c := requestPathServer(e)
			g := &guardConn{c: c}
			read := []byte(strings.Repeat(bc.cmd, 16))
			var cmds []redcon.Command
			var args [][]byte
			b.SetBytes(int64(len(bc.cmd)))
			b.ReportAllocs()
			for i := 0; i < b.N; i += 16 {
				if err := g.feed(read); err != nil {
					b.Fatal(err)
				}
				// The loop replaces its arena when full; here it is
				// reused, so that the figure is the request path's alone.
				cmds, args = g.takeCommands(cmds[:0], args[:0])
				if len(cmds) != 16 {
					b.Fatal("took", len(cmds))
				}
				for _, cmd := range cmds {
					if s.groupable(c, cmd.Args) == nil && bc.name == "XADD" {
						b.Fatal("not groupable")
					}
				}
				g.compact()
			}
		})
	}
}
