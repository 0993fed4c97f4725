package replication

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// BenchmarkFrame measures writing and reading one batch frame, with and
// without checksums, at sizes from one XADD's batch to a full frame.
func BenchmarkFrame(b *testing.B) {
	for _, size := range []int{256, 4 << 10, frameBytes} {
		payload := bytes.Repeat([]byte{0xa5}, size)
		for _, crc := range []bool{false, true} {
			b.Run(fmt.Sprintf("write/size=%d/crc=%v", size, crc), func(b *testing.B) {
				w := bufio.NewWriterSize(io.Discard, 64<<10)
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := writeFrame(w, crc, FrameBatch, payload); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("read/size=%d/crc=%v", size, crc), func(b *testing.B) {
				var enc bytes.Buffer
				w := bufio.NewWriter(&enc)
				writeFrame(w, crc, FrameBatch, payload)
				w.Flush()
				frame := enc.Bytes()
				rd := bytes.NewReader(frame)
				r := bufio.NewReaderSize(rd, 64<<10)
				var buf []byte
				b.SetBytes(int64(size))
				for b.Loop() {
					rd.Reset(frame)
					r.Reset(rd)
					var err error
					if _, _, buf, err = readFrame(r, crc, buf); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
