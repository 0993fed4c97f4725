//go:build linux

// Command wakebench measures how fast a server wakes many blocked
// readers: -clients connections block in XREAD BLOCK 0 STREAMS key $,
// one more connection sends one XADD, and the figure is the time from
// sending that XADD until every blocked client has its reply. It runs on
// Eddy and on a real redis-server side by side (bench.sh starts both),
// alternating servers and which goes first, -repeats wake-ups per round.
//
// Reported per server: p50/p99 over all wake-ups of the time until all
// clients replied ("all"), the median over rounds of each round's p50 and
// p99, and p50/p99 of the single client's wait (first and typical
// reply). Printed as a table and written as JSON to -json.
//
// A wake-up starts only once the server reports every client blocked
// (INFO clients, blocked_clients), so the figure holds the wake path
// alone, not the clients' XREADs arriving.
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

	"github.com/eddy-streams/eddy/bench/internal/resp"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

type options struct {
	redis, eddy string
	clients     int
	rounds      int
	repeats     int
	jsonPath    string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("wakebench", flag.ContinueOnError)
	fs.StringVar(&o.redis, "redis", "", "redis-server address (host:port)")
	fs.StringVar(&o.eddy, "eddy", "", "Eddy address (host:port)")
	fs.IntVar(&o.clients, "clients", 1000, "blocked clients per wake-up")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds, alternating servers")
	fs.IntVar(&o.repeats, "repeats", 20, "wake-ups per round and server")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.redis == "" || o.eddy == "":
		return o, errors.New("-redis and -eddy are required")
	case o.clients < 1 || o.rounds < 1 || o.repeats < 1:
		return o, errors.New("-clients, -rounds and -repeats must be positive")
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "wakebench:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "wakebench:", err)
		os.Exit(1)
	}
}

const streamKey = "wakebench:s"

// summary is one server's figures, in milliseconds.
type summary struct {
	Server string `json:"server"`
	// Time from sending XADD until the last blocked client replied, over
	// every wake-up of every round.
	AllP50Ms float64 `json:"all_p50_ms"`
	AllP99Ms float64 `json:"all_p99_ms"`
	AllMaxMs float64 `json:"all_max_ms"`
	// Median over rounds of each round's p50/p99 of the same figure.
	RoundP50Ms float64 `json:"round_median_p50_ms"`
	RoundP99Ms float64 `json:"round_median_p99_ms"`
	// One client's wait, over every client of every wake-up.
	ClientP50Ms float64 `json:"client_p50_ms"`
	ClientP99Ms float64 `json:"client_p99_ms"`
	// Per round p99, in the order run.
	P99Rounds []float64 `json:"all_p99_ms_rounds"`
}

type result struct {
	Clients  int       `json:"clients"`
	Rounds   int       `json:"rounds"`
	Repeats  int       `json:"repeats"`
	Servers  []summary `json:"servers"`
	RatioP50 float64   `json:"ratio_p50"`
	RatioP99 float64   `json:"ratio_p99"`
}

type server struct {
	name, addr string
	readers    *readers
	admin      *resp.Conn
	all        [][]time.Duration // per round
	client     []time.Duration
}

func (s *server) connect(clients int) error {
	var err error
	if s.admin, err = resp.Dial(s.addr, 5*time.Second); err != nil {
		return err
	}
	if _, err := s.admin.Command("DEL", streamKey); err != nil {
		return err
	}
	s.readers, err = dialReaders(s.addr, clients)
	return err
}

func (s *server) close() {
	if s.readers != nil {
		s.readers.close()
	}
	if s.admin != nil {
		s.admin.Close()
	}
}

var (
	// xread is the blocking read every client sends.
	xread = resp.AppendCommand(nil, "XREAD", "BLOCK", "0", "STREAMS", streamKey, "$")
	xadd  = resp.AppendCommand(nil, "XADD", streamKey, "*", "f", "v")
)

// wake blocks every reader, waits until the server reports them all
// blocked, sends one XADD and times the replies. It returns the time
// until the last reply and each client's time.
func (s *server) wake() (all time.Duration, each []time.Duration, err error) {
	if err := s.readers.sendAll(xread); err != nil {
		return 0, nil, err
	}
	if err := s.waitBlocked(len(s.readers.fds)); err != nil {
		return 0, nil, err
	}
	start := time.Now()
	if err := s.admin.Send(xadd); err != nil {
		return 0, nil, err
	}
	// XADD's own reply is read after the readers', so that reading it
	// does not delay the clock on theirs.
	if err := s.readers.collect(start, time.Minute); err != nil {
		return 0, nil, err
	}
	if err := s.admin.Skip(); err != nil {
		return 0, nil, err
	}
	each = slices.Clone(s.readers.done)
	return slices.Max(each), each, nil
}

func run(o options) error {
	servers := []*server{{name: "redis", addr: o.redis}, {name: "eddy", addr: o.eddy}}
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	for _, s := range servers {
		if err := s.connect(o.clients); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for r := range o.rounds {
		order := servers
		if r%2 == 1 {
			order = []*server{servers[1], servers[0]}
		}
		for _, s := range order {
			var round []time.Duration
			for range o.repeats {
				all, each, err := s.wake()
				if err != nil {
					return fmt.Errorf("%s: round %d: %w", s.name, r, err)
				}
				round = append(round, all)
				s.client = append(s.client, each...)
			}
			s.all = append(s.all, round)
		}
	}

	res := result{Clients: o.clients, Rounds: o.rounds, Repeats: o.repeats}
	for _, s := range servers {
		res.Servers = append(res.Servers, s.summary())
	}
	res.RatioP50 = stats.Ratio(res.Servers[1].AllP50Ms, res.Servers[0].AllP50Ms)
	res.RatioP99 = stats.Ratio(res.Servers[1].AllP99Ms, res.Servers[0].AllP99Ms)
	res.print(os.Stdout)
	return stats.WriteJSON(o.jsonPath, res)
}

// waitBlocked polls INFO clients until blocked_clients reaches n.
func (s *server) waitBlocked(n int) error {
	deadline := time.Now().Add(30 * time.Second)
	last := -1
	for time.Now().Before(deadline) {
		info, err := s.admin.Command("INFO", "clients")
		if err != nil {
			return err
		}
		if last = infoField(info, "blocked_clients"); last >= n {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("only %d of %d clients blocked after 30s", last, n)
}

func infoField(info, name string) int {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}
