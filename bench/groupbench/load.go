package main

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/resp"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

// dialTimeout bounds connecting to a server under test.
const dialTimeout = 10 * time.Second

// fill empties key and appends n entries "f v" to it through conns
// pipelined connections, batch commands per round trip. It returns the
// time taken and checks XLEN afterwards.
func fill(addr, key string, n, conns, batch int) (time.Duration, error) {
	c, err := resp.Dial(addr, dialTimeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.Do(resp.AppendCommand(nil, "DEL", key)); err != nil {
		return 0, err
	}
	one := resp.AppendCommand(nil, "XADD", key, "*", "f", "v")
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for i := range conns {
		share := n / conns
		if i == conns-1 {
			share = n - share*(conns-1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fillConn(addr, one, share, batch)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return took, err
		}
	}
	if err := c.Send(resp.AppendCommand(nil, "XLEN", key)); err != nil {
		return took, err
	}
	got, err := c.Integer()
	if err == nil && got != int64(n) {
		err = fmt.Errorf("XLEN %s = %d after adding %d", key, got, n)
	}
	return took, err
}

func fillConn(addr string, one []byte, n, batch int) error {
	c, err := resp.Dial(addr, dialTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	cmds := bytes.Repeat(one, batch)
	for done := 0; done < n; {
		k := min(batch, n-done)
		if err := c.Send(cmds[:k*len(one)]); err != nil {
			return err
		}
		for range k {
			if err := c.Skip(); err != nil {
				return err
			}
		}
		done += k
	}
	return nil
}

// throughputResult is one run of the read-then-ack load on one server.
type throughputResult struct {
	Acked   int64
	Pairs   int64
	Elapsed time.Duration
	P50     time.Duration
	P99     time.Duration
	Drained bool
}

func (r throughputResult) ackedPerSec() float64 { return float64(r.Acked) / r.Elapsed.Seconds() }

// opsPerSec counts XREADGROUP and XACK as one op each.
func (r throughputResult) opsPerSec() float64 { return float64(2*r.Pairs) / r.Elapsed.Seconds() }

// throughput creates group at 0 on key and runs clients connections,
// each with its own consumer, looping XREADGROUP … COUNT count > then
// XACK of the IDs it got, until dur has passed or the group has read the
// whole stream. The latency of a pair is from sending XREADGROUP to
// reading XACK's reply.
func throughput(addr, key, group string, clients, count int, dur time.Duration) (throughputResult, error) {
	var res throughputResult
	admin, err := resp.Dial(addr, dialTimeout)
	if err != nil {
		return res, err
	}
	defer admin.Close()
	if err := admin.Do(resp.AppendCommand(nil, "XGROUP", "CREATE", key, group, "0")); err != nil {
		return res, err
	}
	conns := make([]*resp.Conn, clients)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		if conns[i], err = resp.Dial(addr, dialTimeout); err != nil {
			return res, err
		}
	}

	type clientStats struct {
		acked, pairs int64
		drained      bool
		lat          []time.Duration
		err          error
	}
	perClient := make([]clientStats, clients)
	var stop atomic.Bool
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &perClient[i]
			c := conns[i]
			read := resp.AppendCommand(nil, "XREADGROUP", "GROUP", group, "c"+strconv.Itoa(i),
				"COUNT", strconv.Itoa(count), "STREAMS", key, ">")
			ack := make([]byte, 0, 64+count*32)
			ids := idList{buf: make([]byte, 0, count*24), ends: make([]int, 0, count)}
			st.lat = make([]time.Duration, 0, 1<<15)
			<-begin
			for !stop.Load() {
				t0 := time.Now()
				ids.reset()
				if st.err = c.Send(read); st.err != nil {
					return
				}
				if st.err = readEntries(c, &ids); st.err != nil {
					return
				}
				if ids.len() == 0 {
					st.drained = true
					return
				}
				ack = resp.AppendArrayHeader(ack[:0], 3+ids.len())
				ack = resp.AppendBulkString(ack, "XACK")
				ack = resp.AppendBulkString(ack, key)
				ack = resp.AppendBulkString(ack, group)
				for j := range ids.len() {
					ack = resp.AppendBulk(ack, ids.at(j))
				}
				if st.err = c.Send(ack); st.err != nil {
					return
				}
				n, err := c.Integer()
				if st.err = err; err != nil {
					return
				}
				st.lat = append(st.lat, time.Since(t0))
				st.acked += n
				st.pairs++
			}
		}()
	}
	start := time.Now()
	timer := time.AfterFunc(dur, func() { stop.Store(true) })
	close(begin)
	wg.Wait()
	res.Elapsed = time.Since(start)
	timer.Stop()

	var all []time.Duration
	for i := range perClient {
		st := &perClient[i]
		if st.err != nil {
			return res, fmt.Errorf("client %d: %w", i, st.err)
		}
		res.Acked += st.acked
		res.Pairs += st.pairs
		res.Drained = res.Drained || st.drained
		all = append(all, st.lat...)
	}
	res.P50, res.P99 = stats.Percentile(all, 0.50), stats.Percentile(all, 0.99)
	return res, nil
}

// buildPEL creates group at 0 on key and has consumer c0 read n entries
// without acknowledging them, batch at a time, so the group's PEL holds n
// entries. It returns the time taken.
func buildPEL(addr, key, group string, n, batch int) (time.Duration, error) {
	c, err := resp.Dial(addr, dialTimeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.Do(resp.AppendCommand(nil, "XGROUP", "CREATE", key, group, "0")); err != nil {
		return 0, err
	}
	start := time.Now()
	var ids idList
	for done := 0; done < n; {
		k := min(batch, n-done)
		ids.reset()
		cmd := resp.AppendCommand(nil, "XREADGROUP", "GROUP", group, "c0", "COUNT", strconv.Itoa(k), "STREAMS", key, ">")
		if err := c.Send(cmd); err != nil {
			return 0, err
		}
		if err := readEntries(c, &ids); err != nil {
			return 0, err
		}
		if ids.len() == 0 {
			return 0, fmt.Errorf("stream %s ran out after %d entries, want %d", key, done, n)
		}
		done += ids.len()
	}
	took := time.Since(start)
	return took, c.Do(resp.AppendCommand(nil, "XPENDING", key, group))
}

// pelProbe measures single calls against one group's large PEL, on its
// own connection. The XAUTOCLAIM cursor is kept between runs, so
// successive runs walk on through the PEL (starting over at 0-0 when
// the cursor comes back as 0-0), as a claimer sweeping it would.
type pelProbe struct {
	c       *resp.Conn
	key     string
	group   string
	pending []byte
	cursor  []byte
	claimed idList
	lat     []time.Duration
}

func newPELProbe(addr, key, group string) (*pelProbe, error) {
	c, err := resp.Dial(addr, dialTimeout)
	if err != nil {
		return nil, err
	}
	return &pelProbe{
		c: c, key: key, group: group,
		pending: resp.AppendCommand(nil, "XPENDING", key, group),
		cursor:  append(make([]byte, 0, 48), "0-0"...),
		claimed: idList{buf: make([]byte, 0, 1024), ends: make([]int, 0, 64)},
	}, nil
}

func (p *pelProbe) Close() error { return p.c.Close() }

// xpending times that many calls of XPENDING key group (the summary).
func (p *pelProbe) xpending(calls int) (p50, p99 time.Duration, err error) {
	p.lat = p.lat[:0]
	for range calls {
		t0 := time.Now()
		if err := p.c.Do(p.pending); err != nil {
			return 0, 0, err
		}
		p.lat = append(p.lat, time.Since(t0))
	}
	return stats.Percentile(p.lat, 0.50), stats.Percentile(p.lat, 0.99), nil
}

// xautoclaim times that many calls of XAUTOCLAIM key group c 0 <cursor>
// COUNT 10, each continuing from the cursor the previous one returned.
func (p *pelProbe) xautoclaim(calls int) (p50, p99 time.Duration, err error) {
	p.lat = p.lat[:0]
	cmd := make([]byte, 0, 256)
	for range calls {
		cmd = resp.AppendArrayHeader(cmd[:0], 8)
		for _, a := range [...]string{"XAUTOCLAIM", p.key, p.group, "c", "0"} {
			cmd = resp.AppendBulkString(cmd, a)
		}
		cmd = resp.AppendBulk(cmd, p.cursor)
		cmd = resp.AppendBulkString(cmd, "COUNT")
		cmd = resp.AppendBulkString(cmd, "10")
		p.claimed.reset()
		t0 := time.Now()
		if err := p.c.Send(cmd); err != nil {
			return 0, 0, err
		}
		if p.cursor, err = readAutoclaim(p.c, p.cursor, &p.claimed); err != nil {
			return 0, 0, err
		}
		p.lat = append(p.lat, time.Since(t0))
		if p.claimed.len() == 0 && string(p.cursor) != "0-0" {
			return 0, 0, fmt.Errorf("XAUTOCLAIM claimed nothing from a full PEL (cursor %s)", p.cursor)
		}
	}
	return stats.Percentile(p.lat, 0.50), stats.Percentile(p.lat, 0.99), nil
}

// settle waits (up to a minute) until the server is not rewriting its
// AOF, so a background rewrite started by one phase (a child process
// competing for the two cores) is not charged to the next measurement.
// A server whose INFO has no such field is settled.
func settle(addr string) error {
	c, err := resp.Dial(addr, dialTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	cmd := resp.AppendCommand(nil, "INFO", "persistence")
	deadline := time.Now().Add(time.Minute)
	for {
		if err := c.Send(cmd); err != nil {
			return err
		}
		info, _, err := c.Bulk(nil)
		if err != nil {
			return err
		}
		busy := bytes.Contains(info, []byte("aof_rewrite_in_progress:1")) ||
			bytes.Contains(info, []byte("aof_rewrite_scheduled:1"))
		if !busy || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // polling a background process; nothing to wait on
	}
}
