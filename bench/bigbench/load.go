//go:build linux

package main

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/resp"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

// Entries have three fields and 60 bytes of field names and values, the
// shape of a small event: device (6) + "d" and 7 digits (8), temp (4) +
// a reading like "23.57" (5), payload (7) + 30 characters from a 36-letter
// alphabet (30). Values follow from the entry's index alone, so both
// servers store the same bytes; the payload is pseudo-random, so neither
// store gets data that compresses better than real events would.
const (
	fieldBytes = 6 + 8 + 4 + 5 + 7 + 30
	payloadLen = 30
)

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// appendXAdd appends XADD key * with entry i's fields.
func appendXAdd(dst []byte, key string, i uint64) []byte {
	dst = resp.AppendArrayHeader(dst, 9)
	dst = resp.AppendBulkString(dst, "XADD")
	dst = resp.AppendBulkString(dst, key)
	dst = resp.AppendBulkString(dst, "*")
	dst = resp.AppendBulkString(dst, "device")
	var v [payloadLen]byte
	dev := append(v[:0], 'd')
	dev = appendPadded(dev, i%10_000_000, 7)
	dst = resp.AppendBulk(dst, dev)
	dst = resp.AppendBulkString(dst, "temp")
	h := mix(i)
	t := h % 3000 // 10.00 .. 39.99
	tv := strconv.AppendUint(v[:0], 10+t/100, 10)
	tv = append(tv, '.')
	tv = appendPadded(tv, t%100, 2)
	dst = resp.AppendBulk(dst, tv)
	dst = resp.AppendBulkString(dst, "payload")
	p := v[:payloadLen]
	for j := range p {
		if j%12 == 0 {
			h = mix(h + uint64(j))
		}
		p[j] = alphabet[h%36]
		h /= 36
	}
	return resp.AppendBulk(dst, p)
}

func appendPadded(dst []byte, n uint64, width int) []byte {
	var d [20]byte
	s := strconv.AppendUint(d[:0], n, 10)
	for range width - len(s) {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// mix is SplitMix64's finaliser: a cheap, well-spread hash of i.
func mix(i uint64) uint64 {
	z := i + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// load appends n entries (indexes from first) to key over conns
// pipelined connections, batch commands per round trip, and returns the
// time taken.
func load(addr, key string, first, n uint64, conns, batch int) (time.Duration, error) {
	var next atomic.Uint64 // batches handed out
	batches := (n + uint64(batch) - 1) / uint64(batch)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := resp.Dial(addr, 5*time.Second)
			if err != nil {
				errs[w] = err
				return
			}
			defer c.Close()
			buf := make([]byte, 0, batch*128)
			for {
				b := next.Add(1) - 1
				if b >= batches {
					return
				}
				lo := first + b*uint64(batch)
				hi := min(lo+uint64(batch), first+n)
				buf = buf[:0]
				for i := lo; i < hi; i++ {
					buf = appendXAdd(buf, key, i)
				}
				if errs[w] = c.Send(buf); errs[w] != nil {
					return
				}
				for range hi - lo {
					if errs[w] = c.Skip(); errs[w] != nil {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return took, err
		}
	}
	return took, nil
}

// xlen is XLEN key.
func xlen(addr, key string) (int64, error) {
	c, err := resp.Dial(addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	s, err := c.Command("XLEN", key)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// rangeResult is one run of XRANGE of the oldest entries under write load.
type rangeResult struct {
	Samples  int     `json:"samples"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	WriteS   float64 `json:"write_s"`
	WriteMBs float64 `json:"write_mb_per_s"`
}

// rangeUnderLoad writes entries of newer data to key on writers
// connections, and meanwhile loops XRANGE key - + COUNT count on one more
// connection, timing each call; it stops when the writes are done.
func rangeUnderLoad(addr, key string, first, entries uint64, writers, count int) (rangeResult, error) {
	c, err := resp.Dial(addr, 5*time.Second)
	if err != nil {
		return rangeResult{}, err
	}
	defer c.Close()
	xrange := resp.AppendCommand(nil, "XRANGE", key, "-", "+", "COUNT", strconv.Itoa(count))
	var lat []time.Duration
	var took time.Duration
	var loadErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Small pipelines keep the writers' load steady rather than bursty.
		took, loadErr = load(addr, key, first, entries, writers, 100)
	}()
	var readErr error
loop:
	for {
		select {
		case <-done:
			break loop
		default:
		}
		t0 := time.Now()
		if readErr = c.Send(xrange); readErr != nil {
			break
		}
		n, err := c.SkipCount()
		if err == nil && n != int64(count) {
			err = fmt.Errorf("XRANGE returned %d entries, want %d", n, count)
		}
		if readErr = err; err != nil {
			break
		}
		lat = append(lat, time.Since(t0))
	}
	<-done
	if loadErr != nil {
		return rangeResult{}, loadErr
	}
	if readErr != nil {
		return rangeResult{}, readErr
	}
	r := rangeResult{
		Samples: len(lat),
		P50Ms:   stats.Ms(stats.Percentile(lat, 0.50)),
		P99Ms:   stats.Ms(stats.Percentile(lat, 0.99)),
		MaxMs:   stats.Ms(stats.Percentile(lat, 1)),
		WriteS:  took.Seconds(),
	}
	r.WriteMBs = float64(entries*fieldBytes) / 1e6 / took.Seconds()
	return r, nil
}
