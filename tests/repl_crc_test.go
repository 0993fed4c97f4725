package tests

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Frames carry CRC-32C checksums (feature "crc"): a byte damaged on the
// way makes the replica drop the link and resync, never apply it.

// flipProxy forwards TCP to target and, once, flips a bit of the first
// occurrence of marker in what the target sends.
type flipProxy struct {
	*proxy
	marker  []byte
	flipped atomic.Bool
}

func startFlipProxy(t *testing.T, target string, marker []byte) *flipProxy {
	px := &flipProxy{marker: marker}
	px.proxy = startProxyCopying(t, target, px.copyFlipping)
	return px
}

// copyFlipping copies src to dst, flipping the last byte of the marker's
// first occurrence. The search keeps the tail of the previous read, so a
// marker split across reads is found in the read that completes it,
// before that read is forwarded.
func (px *flipProxy) copyFlipping(dst io.Writer, src io.Reader) {
	buf := make([]byte, 64<<10)
	var tail []byte
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if !px.flipped.Load() {
				window := append(tail, chunk...)
				if i := bytes.Index(window, px.marker); i >= 0 {
					last := i + len(px.marker) - 1 - len(tail)
					chunk[last] ^= 0x20
					px.flipped.Store(true)
				}
				keep := min(len(window), len(px.marker)-1)
				tail = append(tail[:0], window[len(window)-keep:]...)
			}
			if _, werr := dst.Write(chunk); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func TestReplCorruptFrameResyncs(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	addEntries(t, pc, "s", 50)
	const marker = "value-to-be-damaged-on-the-wire"
	px := startFlipProxy(t, p.Addr(), []byte(marker))
	r, rc := startReplica(t, px.ln.Addr().String())
	waitCaughtUp(t, pc, 1)

	id, err := pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"v", marker}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Set(ctx, "str", marker, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The replica has the entry once it resynced past the damaged frame.
	waitCaughtUp(t, pc, 1)
	if !px.flipped.Load() {
		t.Fatal("the proxy did not see the marker: nothing was damaged")
	}
	if !strings.Contains(r.log.String(), "checksum mismatch") {
		t.Errorf("the replica logged no checksum mismatch:\n%s", r.log.String())
	}
	es, err := rc.XRange(ctx, "s", id, id).Result()
	if err != nil || len(es) != 1 || es[0].Values["v"] != marker {
		t.Fatalf("XRANGE on the replica = %v, %v; want the undamaged value", es, err)
	}
	if full, part := infoField(t, pc, "stats", "sync_full"), infoField(t, pc, "stats", "sync_partial_ok"); full != "1" || part != "1" {
		t.Errorf("sync_full %s, sync_partial_ok %s; want 1 and 1 (the link dropped and resumed)", full, part)
	}
	compareServers(t, pc, rc)
}
