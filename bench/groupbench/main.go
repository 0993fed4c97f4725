package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/quiet"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

// options are the command line; bench.sh maps its environment onto them.
type options struct {
	redis, eddy string
	rounds      int
	clients     int
	count       int
	duration    time.Duration
	entries     int
	pels        []int
	calls       int
	jsonPath    string
	// pelCost off skips the PEL cost load: the throughput load alone,
	// e.g. to profile a server under it.
	pelCost bool
	// noFill reuses the stream a previous run filled (repeated runs
	// against the same servers, e.g. while profiling); tag then makes
	// this run's group names differ from the earlier runs'.
	noFill bool
	tag    string
}

func parseFlags(args []string) (options, error) {
	var o options
	var pels string
	fs := flag.NewFlagSet("groupbench", flag.ContinueOnError)
	fs.StringVar(&o.redis, "redis", "", "redis-server address (host:port)")
	fs.StringVar(&o.eddy, "eddy", "", "Eddy address (host:port)")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds per load, alternating servers")
	fs.IntVar(&o.clients, "clients", 50, "concurrent consumers in the throughput load")
	fs.IntVar(&o.count, "count", 10, "XREADGROUP COUNT in the throughput load")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "longest throughput run (it also ends when the stream is drained)")
	fs.IntVar(&o.entries, "entries", 0, "entries in the stream (default: the largest -pel size)")
	fs.StringVar(&pels, "pel", "10000,1000000", "PEL sizes to probe, comma separated")
	fs.IntVar(&o.calls, "calls", 200, "XPENDING / XAUTOCLAIM calls per round and PEL size")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.BoolVar(&o.pelCost, "pelcost", true, "run the PEL cost load after the throughput load")
	fs.BoolVar(&o.noFill, "nofill", false, "reuse the stream a previous run filled (its groups get names of their own)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, f := range strings.FieldsFunc(pels, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("-pel: bad size %q", f)
		}
		o.pels = append(o.pels, n)
	}
	slices.Sort(o.pels)
	switch {
	case o.redis == "" || o.eddy == "":
		return o, errors.New("-redis and -eddy are required")
	case len(o.pels) == 0:
		return o, errors.New("-pel: no sizes")
	case o.rounds < 1 || o.clients < 1 || o.count < 1 || o.calls < 1:
		return o, errors.New("-rounds, -clients, -count and -calls must be positive")
	}
	o.entries = max(o.entries, o.pels[len(o.pels)-1])
	if o.noFill {
		o.tag = "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupbench:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "groupbench:", err)
		os.Exit(1)
	}
}

const (
	streamKey = "groupbench:s"
	fillConns = 4
	fillBatch = 1000
	pelBatch  = 10000
)

type server struct {
	name, addr string
	pid        int // 0 when the server is not on this machine
}

// waitOthers waits until every server but s is quiet (bench/internal/quiet):
// a round of s must not share the CPUs with what another server still does
// after its own round.
func waitOthers(servers []server, s server) error {
	for _, o := range servers {
		if o.name != s.name && o.pid != 0 {
			if err := quiet.Wait(o.pid); err != nil {
				return err
			}
		}
	}
	return nil
}

// order is the servers in the order round r visits them: alternating
// which goes first, so neither always runs on a machine the other has
// just warmed or disturbed.
func order(s []server, r int) []server {
	if r%2 == 0 {
		return s
	}
	return []server{s[1], s[0]}
}

func run(o options) error {
	servers := []server{{name: "redis", addr: o.redis}, {name: "eddy", addr: o.eddy}}
	for i := range servers {
		servers[i].pid = quiet.LocalPID(servers[i].addr)
	}
	var res result
	res.Entries, res.Clients, res.Count, res.Rounds = o.entries, o.clients, o.count, o.rounds
	res.DurationS, res.Calls = o.duration.Seconds(), o.calls

	// Setup: the same stream on both.
	res.Setup.FillS = map[string]float64{}
	for _, s := range servers {
		if o.noFill {
			break
		}
		took, err := fill(s.addr, streamKey, o.entries, fillConns, fillBatch)
		if err != nil {
			return fmt.Errorf("%s: fill: %w", s.name, err)
		}
		res.Setup.FillS[s.name] = took.Seconds()
		if err := settle(s.addr); err != nil {
			return err
		}
	}

	// Throughput: a fresh group per round and server.
	tp := map[string][]throughputResult{}
	for r := range o.rounds {
		for _, s := range order(servers, r) {
			if err := settle(s.addr); err != nil {
				return err
			}
			if err := waitOthers(servers, s); err != nil {
				return err
			}
			t, err := throughput(s.addr, streamKey, "tp"+strconv.Itoa(r)+o.tag, o.clients, o.count, o.duration)
			if err != nil {
				return fmt.Errorf("%s: throughput: %w", s.name, err)
			}
			tp[s.name] = append(tp[s.name], t)
		}
	}
	for _, s := range servers {
		var acked, ops, p50, p99 []float64
		drained := 0
		for _, t := range tp[s.name] {
			acked = append(acked, t.ackedPerSec())
			ops = append(ops, t.opsPerSec())
			p50 = append(p50, stats.Ms(t.P50))
			p99 = append(p99, stats.Ms(t.P99))
			if t.Drained {
				drained++
			}
		}
		res.Throughput = append(res.Throughput, throughputSummary{
			Server: s.name, AckedPerS: stats.Median(acked), OpsPerS: stats.Median(ops),
			P50Ms: stats.Median(p50), P99Ms: stats.Median(p99), RoundsDrained: drained,
			AckedPerSRounds: acked,
		})
	}
	// servers is redis, then eddy.
	res.AckedPairedRatio = stats.PairedRatio(res.Throughput[1].AckedPerSRounds, res.Throughput[0].AckedPerSRounds)

	if o.pelCost {
		if err := pelCost(o, servers, &res); err != nil {
			return err
		}
	}

	res.print(os.Stdout)
	return stats.WriteJSON(o.jsonPath, res)
}

// pelCost runs the PEL cost load: one group per size, then the probes.
func pelCost(o options, servers []server, res *result) error {
	res.Setup.PELBuildS = map[string]map[string]float64{}
	probes := map[string]map[int]*pelProbe{}
	defer func() {
		for _, m := range probes {
			for _, p := range m {
				p.Close()
			}
		}
	}()
	for _, s := range servers {
		res.Setup.PELBuildS[s.name] = map[string]float64{}
		probes[s.name] = map[int]*pelProbe{}
		for _, n := range o.pels {
			group := "pel" + strconv.Itoa(n) + o.tag
			took, err := buildPEL(s.addr, streamKey, group, n, pelBatch)
			if err != nil {
				return fmt.Errorf("%s: PEL of %d: %w", s.name, n, err)
			}
			res.Setup.PELBuildS[s.name][strconv.Itoa(n)] = took.Seconds()
			if probes[s.name][n], err = newPELProbe(s.addr, streamKey, group); err != nil {
				return err
			}
		}
		if err := settle(s.addr); err != nil {
			return err
		}
	}
	type key struct {
		server, call string
		pel          int
	}
	p50s, p99s := map[key][]float64{}, map[key][]float64{}
	for r := range o.rounds {
		for _, s := range order(servers, r) {
			if err := waitOthers(servers, s); err != nil {
				return err
			}
			for _, n := range o.pels {
				p := probes[s.name][n]
				for _, call := range calls {
					a, b, err := call.run(p, o.calls)
					if err != nil {
						return fmt.Errorf("%s: %s with PEL %d: %w", s.name, call.name, n, err)
					}
					k := key{s.name, call.name, n}
					p50s[k] = append(p50s[k], stats.Ms(a))
					p99s[k] = append(p99s[k], stats.Ms(b))
				}
			}
		}
	}
	for _, call := range calls {
		for _, n := range o.pels {
			row := pelSummary{Call: call.name, PEL: n}
			row.RedisP50Ms, row.RedisP99Ms = stats.Median(p50s[key{"redis", call.name, n}]), stats.Median(p99s[key{"redis", call.name, n}])
			row.EddyP50Ms, row.EddyP99Ms = stats.Median(p50s[key{"eddy", call.name, n}]), stats.Median(p99s[key{"eddy", call.name, n}])
			row.RatioP50, row.RatioP99 = stats.Ratio(row.EddyP50Ms, row.RedisP50Ms), stats.Ratio(row.EddyP99Ms, row.RedisP99Ms)
			row.RedisP50Rounds, row.RedisP99Rounds = p50s[key{"redis", call.name, n}], p99s[key{"redis", call.name, n}]
			row.EddyP50Rounds, row.EddyP99Rounds = p50s[key{"eddy", call.name, n}], p99s[key{"eddy", call.name, n}]
			res.PEL = append(res.PEL, row)
		}
	}
	return nil
}

// calls are the probes of the PEL cost load, in the order they run.
var calls = []struct {
	name string
	run  func(p *pelProbe, n int) (p50, p99 time.Duration, err error)
}{
	{"XPENDING summary", (*pelProbe).xpending},
	{"XAUTOCLAIM COUNT 10", (*pelProbe).xautoclaim},
}
