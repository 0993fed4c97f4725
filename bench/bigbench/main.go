//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/proc"
	"github.com/eddy-streams/eddy/bench/internal/resp"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

type options struct {
	eddyBin, redisBin string
	eddyArgs          []string
	entries           uint64
	rounds            int
	rangeRounds       int
	writeMB           float64
	settle            time.Duration
	work              string
	keep              bool
	jsonPath          string
	conns, batch      int
	steps             map[string]bool
}

// allSteps are the parts of a run, in order. A later step uses the
// stores an earlier one left (-work and -keep let a later run reuse
// them).
var allSteps = []string{"load", "startup", "range"}

func parseFlags(args []string) (options, error) {
	var o options
	var eddyArgs, steps string
	fs := flag.NewFlagSet("bigbench", flag.ContinueOnError)
	fs.StringVar(&o.eddyBin, "eddy-bin", "bin/eddy", "the eddy binary")
	fs.StringVar(&o.redisBin, "redis-bin", "redis-server", "the redis-server binary")
	fs.StringVar(&eddyArgs, "eddy-args", "", "extra `eddy server` flags, space separated (experiments; the benchmark uses the defaults)")
	fs.Uint64Var(&o.entries, "entries", 10_000_000, "entries to load into the stream")
	fs.IntVar(&o.rounds, "rounds", 5, "start-up rounds per server, alternating")
	fs.IntVar(&o.rangeRounds, "range-rounds", 3, "rounds of XRANGE under write load per server, alternating")
	fs.Float64Var(&o.writeMB, "write-mb", 100, "MB of field names and values written during each XRANGE round")
	fs.DurationVar(&o.settle, "settle", 5*time.Second, "idle time between the end of the load and the RSS reading")
	fs.StringVar(&o.work, "work", "", "directory for the stores (default: a new temporary one, removed at the end)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.IntVar(&o.conns, "conns", 4, "connections loading the stream")
	fs.IntVar(&o.batch, "batch", 1000, "XADDs per pipelined round trip while loading")
	fs.StringVar(&steps, "steps", strings.Join(allSteps, ","), "steps to run, comma separated: load (also memory and disk), startup, range")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.eddyArgs = strings.Fields(eddyArgs)
	o.steps = map[string]bool{}
	for _, s := range strings.Split(steps, ",") {
		if !slices.Contains(allSteps, s) {
			return o, fmt.Errorf("-steps: unknown step %q", s)
		}
		o.steps[s] = true
	}
	switch {
	case fs.NArg() != 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.entries < 100:
		return o, errors.New("-entries must be at least 100 (XRANGE reads the oldest 100)")
	case o.rounds < 1 || o.rangeRounds < 1 || o.conns < 1 || o.batch < 1 || o.writeMB <= 0:
		return o, errors.New("-rounds, -range-rounds, -conns, -batch and -write-mb must be positive")
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigbench:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bigbench:", err)
		os.Exit(1)
	}
}

const (
	streamKey  = "bigbench:s"
	rangeCount = 100
	writers    = 4
)

// bench holds the run's state: where the stores live and the running
// servers.
type bench struct {
	o                 options
	redisDir, eddyDir string
	res               result
}

func run(o options) error {
	if o.work == "" {
		dir, err := os.MkdirTemp("", "bigbench")
		if err != nil {
			return err
		}
		o.work = dir
	}
	if !o.keep {
		defer os.RemoveAll(o.work)
	}
	b := &bench{o: o, redisDir: filepath.Join(o.work, "redis"), eddyDir: filepath.Join(o.work, "eddy")}
	for _, d := range []string{b.redisDir, b.eddyDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	b.res = result{Entries: o.entries, FieldBytes: fieldBytes, Rounds: o.rounds, RangeRounds: o.rangeRounds,
		WriteMB: o.writeMB, SettleS: o.settle.Seconds(), EddyArgs: strings.Join(o.eddyArgs, " ")}
	steps := []struct {
		step, name string
		f          func() error
	}{
		{"load", "load, memory and disk", b.loadAndSize},
		{"startup", "start-up", b.startup},
		{"range", "XRANGE under write load", b.rangeLoad},
	}
	for _, s := range steps {
		if !o.steps[s.step] {
			continue
		}
		fmt.Fprintf(os.Stderr, "bigbench: %s (%s)\n", s.name, time.Now().Format(time.TimeOnly))
		if err := s.f(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	b.res.finish()
	b.res.print(os.Stdout)
	return stats.WriteJSON(o.jsonPath, b.res)
}

// redisArgs are redis-server's flags: with aof, as bench.sh runs it (AOF,
// appendfsync everysec, no snapshots); without, loading dump.rdb.
func (b *bench) redisArgs(port int, aof bool) []string {
	a := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", b.redisDir,
		"--save", "", "--daemonize", "no", "--dbfilename", "dump.rdb"}
	if aof {
		return append(a, "--appendonly", "yes", "--appendfsync", "everysec")
	}
	return append(a, "--appendonly", "no")
}

func (b *bench) startRedis(aof bool) (*proc.Proc, time.Duration, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, 0, err
	}
	return proc.Start("redis", b.o.redisBin, b.redisArgs(port, aof), port, filepath.Join(b.o.work, "redis.log"))
}

// startEddy runs Eddy with its defaults, on a free port and the run's dir.
func (b *bench) startEddy() (*proc.Proc, time.Duration, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, 0, err
	}
	// The NATS bridge stays on (a user's default, and part of the RSS), on
	// a free port rather than 4222.
	args := append([]string{"server", "--port", strconv.Itoa(port), "--dir", b.eddyDir, "--nats-port", "-1"}, b.o.eddyArgs...)
	return proc.Start("eddy", b.o.eddyBin, args, port, filepath.Join(b.o.work, "eddy.log"))
}

// loadAndSize loads the stream into both servers, one after the other,
// reads their memory after a quiet spell, then sizes their stores: Redis
// after SAVE, Eddy after a clean shutdown and after `eddy compact`.
func (b *bench) loadAndSize() error {
	r, _, err := b.startRedis(true)
	if err != nil {
		return err
	}
	defer func() {
		if r != nil {
			r.Kill()
		}
	}()
	e, _, err := b.startEddy()
	if err != nil {
		return err
	}
	defer func() {
		if e != nil {
			e.Kill()
		}
	}()
	res := &b.res
	for _, p := range []*proc.Proc{r, e} {
		took, err := load(p.Addr, streamKey, 0, b.o.entries, b.o.conns, b.o.batch)
		if err != nil {
			return fmt.Errorf("%s: load: %w", p.Name, err)
		}
		res.LoadS.set(p.Name, took.Seconds())
		n, err := xlen(p.Addr, streamKey)
		if err != nil {
			return err
		}
		if n != int64(b.o.entries) {
			return fmt.Errorf("%s: XLEN %d after loading %d entries", p.Name, n, b.o.entries)
		}
		fmt.Fprintf(os.Stderr, "bigbench: %s loaded %d entries in %.1fs\n", p.Name, n, took.Seconds())
	}
	// The servers are idle now; give background work (Pebble's flushes
	// and compactions, Redis's AOF fsyncs) the same time to settle.
	time.Sleep(b.o.settle)
	for _, p := range []*proc.Proc{r, e} {
		m, err := p.Memory()
		if err != nil {
			return err
		}
		used, err := info(p.Addr, "memory", "used_memory")
		if err != nil {
			return err
		}
		res.Memory.set(p.Name, memReport{RSS: m.RSS, Peak: m.Peak, UsedMemory: used})
	}

	// Redis: the RDB is what it would load; the AOF is what it wrote.
	t0 := time.Now()
	if _, err := command(r.Addr, "SAVE"); err != nil {
		return err
	}
	res.Disk.RedisSaveS = time.Since(t0).Seconds()
	if res.Disk.RedisRDB, err = measureDir(filepath.Join(b.redisDir, "dump.rdb")); err != nil {
		return err
	}
	if res.Disk.RedisAOF, err = measureDir(filepath.Join(b.redisDir, "appendonlydir")); err != nil {
		return err
	}
	err = r.Stop()
	r = nil
	if err != nil {
		return err
	}

	// Eddy: as it stands, after a clean shutdown, then compacted.
	if res.Disk.EddyLive, err = measureDir(b.eddyDir); err != nil {
		return err
	}
	err = e.Stop()
	e = nil
	if err != nil {
		return err
	}
	if res.Disk.EddyStopped, err = measureDir(b.eddyDir); err != nil {
		return err
	}
	// One start-up of the store as a server leaves it, before compaction.
	e2, took, err := b.startEddy()
	if err != nil {
		return err
	}
	res.Startup.EddyUncompactedMs = stats.Ms(took)
	if err := e2.Stop(); err != nil {
		return err
	}
	t0 = time.Now()
	out, err := exec.Command(b.o.eddyBin, "compact", "--dir", b.eddyDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("eddy compact: %v: %s", err, out)
	}
	res.Disk.EddyCompactS = time.Since(t0).Seconds()
	res.Disk.EddyCompacted, err = measureDir(b.eddyDir)
	return err
}

// startup times each server from exec to the first PONG, on the stores
// loadAndSize left (Redis loads dump.rdb), alternating which goes first.
func (b *bench) startup() error {
	for round := range b.o.rounds {
		for i := range 2 {
			launch := b.startRedis
			if (round+i)%2 == 1 {
				launch = func(bool) (*proc.Proc, time.Duration, error) { return b.startEddy() }
			}
			p, took, err := launch(false)
			if err != nil {
				return err
			}
			m, err := p.Memory()
			if err == nil {
				err = p.Stop()
			} else {
				p.Kill()
			}
			if err != nil {
				return err
			}
			b.res.Startup.add(p.Name, stats.Ms(took), m.RSS)
		}
	}
	return nil
}

// rangeLoad times XRANGE of the stream's oldest entries while newer
// entries are written on other connections. Redis starts from its RDB
// and turns its AOF back on, so it writes as in the load.
func (b *bench) rangeLoad() error {
	r, _, err := b.startRedis(false)
	if err != nil {
		return err
	}
	defer r.Kill()
	if _, err := command(r.Addr, "CONFIG", "SET", "appendonly", "yes"); err != nil {
		return err
	}
	if err := waitAOFRewrite(r.Addr); err != nil {
		return err
	}
	e, _, err := b.startEddy()
	if err != nil {
		return err
	}
	defer e.Kill()
	perRound := uint64(b.o.writeMB * 1e6 / fieldBytes)
	// New entries continue the sequence from the larger stream, so both
	// servers get the same bytes (and runs that reuse stores stay apart).
	next := uint64(0)
	for _, p := range []*proc.Proc{r, e} {
		n, err := xlen(p.Addr, streamKey)
		if err != nil {
			return err
		}
		next = max(next, uint64(n))
	}
	for round := range b.o.rangeRounds {
		for i := range 2 {
			p := r
			if (round+i)%2 == 1 {
				p = e
			}
			rr, err := rangeUnderLoad(p.Addr, streamKey, next, perRound, writers, rangeCount)
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			b.res.Range.add(p.Name, rr)
		}
		next += perRound
	}
	return nil
}

// waitAOFRewrite waits until Redis has finished the AOF rewrite that
// CONFIG SET appendonly yes starts, so it is not running during the
// measurement.
func waitAOFRewrite(addr string) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		on, err := info(addr, "persistence", "aof_enabled")
		if err != nil {
			return err
		}
		busy, err := info(addr, "persistence", "aof_rewrite_in_progress")
		if err != nil {
			return err
		}
		sched, err := info(addr, "persistence", "aof_rewrite_scheduled")
		if err != nil {
			return err
		}
		if on == 1 && busy == 0 && sched == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("redis: AOF rewrite still running after 10 minutes")
}

func command(addr string, args ...string) (string, error) {
	c, err := resp.Dial(addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// SAVE of a large data set takes a while; no deadline.
	return c.Command(args...)
}

// info reads one integer field of an INFO section.
func info(addr, section, field string) (int64, error) {
	s, err := command(addr, "INFO", section)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO %s has no %s", section, field)
}
