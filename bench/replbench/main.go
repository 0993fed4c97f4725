// Command replbench measures Eddy's replication: the lag from a primary's
// XADD reply to the entry reaching a reader on the replica, and the time
// a full sync of a primary holding many entries takes. It starts its own
// primary and replica (both -eddy-bin) under -work.
//
// Lag: -writers connections XADD to streams lag:<w> on the primary, paced
// to -rate entries/s in all (0: as fast as they can, the most the primary
// takes, which shows whether the replica keeps up), for -seconds. One
// connection on the replica waits in XREAD BLOCK 0 on every lag:<w>
// stream; the lag of an entry is the time its XREAD reply arrived minus
// the time its XADD reply arrived (both clocks in this process). Reported
// per run: the achieved rate and the lag's p50/p99/max; a negative lag
// (the replica's reader answered before the primary's writer read its
// reply) counts as zero.
//
// Full sync: -entries entries (3 fields, ~60 bytes, like bigbench) are
// loaded into the primary by pipelined XADDs to 10 streams; then an empty
// replica gets REPLICAOF and the figure is the time until its link is up
// with the snapshot loaded (INFO master_link_status:up).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/proc"
	"github.com/eddy-streams/eddy/bench/internal/resp"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

type options struct {
	eddyBin  string
	work     string
	rates    []int
	writers  int
	seconds  float64
	entries  int
	jsonPath string
}

func parseFlags(args []string) (options, error) {
	var o options
	var rates string
	fs := flag.NewFlagSet("replbench", flag.ContinueOnError)
	fs.StringVar(&o.eddyBin, "eddy-bin", "bin/eddy", "the eddy binary")
	fs.StringVar(&o.work, "work", "", "directory for the stores (default: a new temporary one, removed)")
	fs.StringVar(&rates, "rates", "10000 0", "lag runs: XADD/s in all, 0 = unpaced")
	fs.IntVar(&o.writers, "writers", 8, "writer connections")
	fs.Float64Var(&o.seconds, "seconds", 10, "length of each lag run")
	fs.IntVar(&o.entries, "entries", 1_000_000, "entries on the primary for the full sync; 0 skips it")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, f := range strings.Fields(rates) {
		r, err := strconv.Atoi(f)
		if err != nil || r < 0 {
			return o, fmt.Errorf("-rates: bad rate %q", f)
		}
		o.rates = append(o.rates, r)
	}
	if o.writers < 1 || o.seconds <= 0 || o.entries < 0 {
		return o, errors.New("-writers and -seconds must be positive, -entries not negative")
	}
	return o, nil
}

type lagResult struct {
	TargetRate   int     `json:"target_rate"` // 0: unpaced
	Writers      int     `json:"writers"`
	Seconds      float64 `json:"seconds"`
	Entries      int     `json:"entries"`
	AchievedRate float64 `json:"achieved_rate"`
	P50Ms        float64 `json:"lag_p50_ms"`
	P99Ms        float64 `json:"lag_p99_ms"`
	MaxMs        float64 `json:"lag_max_ms"`
}

type syncResult struct {
	Entries       int     `json:"entries"`
	LoadSeconds   float64 `json:"load_seconds"`
	SyncSeconds   float64 `json:"full_sync_seconds"`
	EntriesPerSec float64 `json:"full_sync_entries_per_s"`
}

type results struct {
	Lag      []lagResult `json:"lag"`
	FullSync *syncResult `json:"full_sync,omitempty"`
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "replbench:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "replbench:", err)
		os.Exit(1)
	}
}

func run(o options) (err error) {
	if o.work == "" {
		if o.work, err = os.MkdirTemp("", "replbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.work)
	}
	var res results
	if len(o.rates) > 0 {
		if res.Lag, err = lagRuns(o); err != nil {
			return err
		}
	}
	if o.entries > 0 {
		r, err := fullSync(o)
		if err != nil {
			return err
		}
		res.FullSync = &r
	}
	if len(res.Lag) > 0 {
		fmt.Printf("%-12s %8s %12s %10s %10s %10s\n", "repl lag", "writers", "xadd/s", "p50_ms", "p99_ms", "max_ms")
	}
	for _, l := range res.Lag {
		name := strconv.Itoa(l.TargetRate) + "/s"
		if l.TargetRate == 0 {
			name = "max"
		}
		fmt.Printf("%-12s %8d %12.0f %10.3f %10.3f %10.3f\n", name, l.Writers, l.AchievedRate, l.P50Ms, l.P99Ms, l.MaxMs)
	}
	if s := res.FullSync; s != nil {
		fmt.Printf("full sync: %d entries in %.2f s (%.0f entries/s; loading the primary took %.2f s)\n",
			s.Entries, s.SyncSeconds, s.EntriesPerSec, s.LoadSeconds)
	}
	return stats.WriteJSON(o.jsonPath, res)
}

// pair starts a primary and a replica of it in fresh directories under
// work/name.
func pair(o options, name string) (p, r *proc.Proc, err error) {
	dir := filepath.Join(o.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if p, err = startEddy(o.eddyBin, filepath.Join(dir, "primary")); err != nil {
		return nil, nil, err
	}
	host, port, _ := strings.Cut(p.Addr, ":")
	if r, err = startEddy(o.eddyBin, filepath.Join(dir, "replica"), "--replicaof", host+" "+port); err != nil {
		p.Stop()
		return nil, nil, err
	}
	c, err := resp.Dial(r.Addr, time.Second)
	if err == nil {
		err = waitSynced(c, time.Minute)
		c.Close()
	}
	if err != nil {
		r.Stop()
		p.Stop()
		return nil, nil, err
	}
	return p, r, nil
}

func lagRuns(o options) ([]lagResult, error) {
	p, r, err := pair(o, "lag")
	if err != nil {
		return nil, err
	}
	var out []lagResult
	for _, rate := range o.rates {
		l, err := lagRun(o, p, r, rate, len(out))
		if err != nil {
			r.Stop()
			p.Stop()
			return nil, err
		}
		out = append(out, l)
	}
	return out, errors.Join(r.Stop(), p.Stop())
}

// lagRun is one lag measurement; run numbers the streams, so that each
// run starts on empty ones.
func lagRun(o options, p, r *proc.Proc, rate, run int) (lagResult, error) {
	w := o.writers
	d := time.Duration(o.seconds * float64(time.Second))
	capacity := 2_000_000
	if rate > 0 {
		capacity = int(float64(rate)*o.seconds*1.1) + 1000
	}
	per := capacity/w + 1
	sent := make([][]atomic.Int64, w) // [writer][seq-1]: XADD reply, ns since t0
	recv := make([][]int64, w)        // [writer][seq-1]: XREAD reply on the replica
	for i := range w {
		sent[i] = make([]atomic.Int64, per)
		recv[i] = make([]int64, per)
	}
	keys := make([]string, w)
	for i := range keys {
		keys[i] = fmt.Sprintf("lag:%d:%d", run, i)
	}

	rc, err := resp.Dial(r.Addr, time.Second)
	if err != nil {
		return lagResult{}, err
	}
	defer rc.Close()
	t0 := time.Now()
	counts := make([]int, w)
	readErr := make(chan error, 1)
	var stopRead atomic.Bool
	readCount := make([]atomic.Int64, w)
	go func() { readErr <- readLoop(rc, keys, recv, readCount, t0, &stopRead) }()

	var wg sync.WaitGroup
	errs := make([]error, w)
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = writeLoop(p.Addr, keys[i], sent[i], t0, d, rate, w, i)
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	if err := errors.Join(errs...); err != nil {
		return lagResult{}, err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	// The reader is done when it has every entry.
	deadline := time.Now().Add(time.Minute)
	for {
		got := 0
		for i := range w {
			got += int(readCount[i].Load())
		}
		if got >= total {
			break
		}
		select {
		case err := <-readErr:
			return lagResult{}, fmt.Errorf("reader on the replica: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return lagResult{}, fmt.Errorf("the replica's reader got %d of %d entries within a minute", got, total)
		}
		time.Sleep(time.Millisecond)
	}
	stopRead.Store(true)
	// Wake the reader so it sees stopRead.
	pc, err := resp.Dial(p.Addr, time.Second)
	if err != nil {
		return lagResult{}, err
	}
	_, err = pc.Command("XADD", keys[0], "*", "stop", "1")
	pc.Close()
	if err != nil {
		return lagResult{}, err
	}
	if err := <-readErr; err != nil {
		return lagResult{}, fmt.Errorf("reader on the replica: %w", err)
	}
	lags := make([]time.Duration, 0, total)
	for i := range w {
		for n := range counts[i] {
			lags = append(lags, max(0, time.Duration(recv[i][n]-sent[i][n].Load())))
		}
	}
	return lagResult{
		TargetRate: rate, Writers: w, Seconds: elapsed.Seconds(), Entries: total,
		AchievedRate: float64(total) / elapsed.Seconds(),
		P50Ms:        stats.Ms(stats.Percentile(lags, 0.50)),
		P99Ms:        stats.Ms(stats.Percentile(lags, 0.99)),
		MaxMs:        stats.Ms(stats.Percentile(lags, 1)),
	}, nil
}

// writeLoop XADDs entries 1-1, 1-2, … to key until d has passed (or its
// slice of the capacity is used), paced to rate/writers per second when
// rate > 0.
func writeLoop(addr, key string, sent []atomic.Int64, t0 time.Time, d time.Duration, rate, writers, idx int) (int, error) {
	c, err := resp.Dial(addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(writers) / float64(rate))
	}
	// Writers start spread over one interval, so paced writes interleave.
	start := time.Duration(idx) * interval / time.Duration(writers)
	var cmd []byte
	n := 0
	for n < len(sent) {
		if interval > 0 {
			due := start + time.Duration(n)*interval
			if wait := due - time.Since(t0); wait > 0 {
				time.Sleep(wait)
			}
		}
		if time.Since(t0) >= d {
			break
		}
		cmd = resp.AppendCommand(cmd[:0], "XADD", key, "1-"+strconv.Itoa(n+1), "f", "v")
		if err := c.Do(cmd); err != nil {
			return n, fmt.Errorf("XADD on the primary: %w", err)
		}
		sent[n].Store(int64(time.Since(t0)))
		n++
	}
	return n, nil
}

// readLoop waits on the replica for new entries of every key and records
// when each arrived (readCount[i] counts key i's), until stop is set.
func readLoop(c *resp.Conn, keys []string, recv [][]int64, readCount []atomic.Int64, t0 time.Time, stop *atomic.Bool) error {
	last := make([]string, len(keys))
	idx := make(map[string]int, len(keys))
	for i, k := range keys {
		last[i] = "0-0"
		idx[k] = i
	}
	for !stop.Load() {
		args := append([]string{"XREAD", "COUNT", "10000", "BLOCK", "0", "STREAMS"}, keys...)
		args = append(args, last...)
		s, err := c.Command(args...)
		at := int64(time.Since(t0))
		if err != nil {
			return err
		}
		// The flattened reply: key id f v id f v … key id f v …
		cur := -1
		toks := strings.Fields(s)
		for j := 0; j < len(toks); {
			if i, ok := idx[toks[j]]; ok {
				cur = i
				j++
				continue
			}
			if cur < 0 || j+2 >= len(toks) {
				return fmt.Errorf("odd XREAD reply near %q", toks[j])
			}
			id := toks[j]
			last[cur] = id
			if ms, seq, ok := strings.Cut(id, "-"); ok && ms == "1" {
				if n, err := strconv.Atoi(seq); err == nil && n >= 1 && n <= len(recv[cur]) {
					recv[cur][n-1] = at
					readCount[cur].Add(1)
				}
			}
			j += 3
		}
	}
	return nil
}

// fullSync loads o.entries entries into a primary, then times an empty
// replica's full sync from REPLICAOF to its link being up.
func fullSync(o options) (syncResult, error) {
	dir := filepath.Join(o.work, "sync")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return syncResult{}, err
	}
	p, err := startEddy(o.eddyBin, filepath.Join(dir, "primary"))
	if err != nil {
		return syncResult{}, err
	}
	defer p.Stop()
	r, err := startEddy(o.eddyBin, filepath.Join(dir, "replica"))
	if err != nil {
		return syncResult{}, err
	}
	defer r.Stop()

	t0 := time.Now()
	if err := load(p.Addr, o.entries); err != nil {
		return syncResult{}, err
	}
	loaded := time.Since(t0)

	rc, err := resp.Dial(r.Addr, time.Second)
	if err != nil {
		return syncResult{}, err
	}
	defer rc.Close()
	host, port, _ := strings.Cut(p.Addr, ":")
	t1 := time.Now()
	if _, err := rc.Command("REPLICAOF", host, port); err != nil {
		return syncResult{}, err
	}
	if err := waitSynced(rc, time.Hour); err != nil {
		return syncResult{}, err
	}
	took := time.Since(t1)
	n := 0
	for i := range 10 {
		s, err := rc.Command("XLEN", "sync:"+strconv.Itoa(i))
		if err != nil {
			return syncResult{}, err
		}
		m, _ := strconv.Atoi(s)
		n += m
	}
	if n != o.entries {
		return syncResult{}, fmt.Errorf("the replica holds %d entries after the sync, want %d", n, o.entries)
	}
	return syncResult{Entries: o.entries, LoadSeconds: loaded.Seconds(), SyncSeconds: took.Seconds(),
		EntriesPerSec: float64(o.entries) / took.Seconds()}, nil
}

// load XADDs n entries of 3 fields round-robin to streams sync:0..9,
// pipelined 1000 deep.
func load(addr string, n int) error {
	c, err := resp.Dial(addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	const depth = 1000
	var cmd []byte
	for done := 0; done < n; {
		k := min(depth, n-done)
		cmd = cmd[:0]
		for j := range k {
			i := done + j
			cmd = resp.AppendCommand(cmd, "XADD", "sync:"+strconv.Itoa(i%10), "*",
				"user", strconv.Itoa(i%100000), "event", "page_view", "path", "/p/"+strconv.Itoa(i%1000))
		}
		if err := c.Send(cmd); err != nil {
			return err
		}
		for range k {
			if err := c.Skip(); err != nil {
				return fmt.Errorf("XADD on the primary: %w", err)
			}
		}
		done += k
	}
	return nil
}
