// Command natsbench measures JetStream Direct Get against Eddy's NATS
// bridge and against a real nats-server JetStream stream holding the same
// messages: p50/p99 latency and throughput, sequential (one requester)
// and concurrent (16 requesters), random sequences.
//
//	natsbench -eddy-redis 127.0.0.1:6379 -eddy-nats nats://127.0.0.1:4222 -json out.json
//
// Eddy must be running; natsbench writes the stream "natsbench" into it
// through RESP and starts the nats-server itself, with JetStream in a
// temporary directory: in a child process (natsbench itself, with
// -serve-jetstream), so that both targets are another process as seen
// from the requesters, or with -inproc in natsbench's own process, which
// spares its requests the wake-up of another process.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

type result struct {
	Target      string  `json:"target"`
	Process     string  `json:"process,omitempty"` // where the nats-server ran: "child" or "in-process"
	Mode        string  `json:"mode"`
	Requesters  int     `json:"requesters"`
	Requests    int     `json:"requests"`
	P50Micros   float64 `json:"p50_us"`
	P99Micros   float64 `json:"p99_us"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	WallSeconds float64 `json:"wall_seconds"`
}

func main() {
	redisAddr := flag.String("eddy-redis", "127.0.0.1:6379", "Eddy's RESP address")
	eddyNATS := flag.String("eddy-nats", "nats://127.0.0.1:4222", "Eddy's NATS bridge URL")
	messages := flag.Int("messages", 10000, "messages in the stream")
	requests := flag.Int("requests", 20000, "Direct Gets per run")
	conc := flag.Int("concurrency", 16, "requesters in the concurrent run")
	out := flag.String("json", "", "write the results here as JSON")
	inproc := flag.Bool("inproc", false, "run the nats-server in this process rather than a child")
	serve := flag.String("serve-jetstream", "", "(child mode) serve JetStream from this directory, print the URL, stop when stdin closes")
	flag.Parse()
	if *serve != "" {
		if err := serveJetStream(*serve); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(*redisAddr, *eddyNATS, *messages, *requests, *conc, *inproc, *out); err != nil {
		log.Fatal(err)
	}
}

func startJetStream(dir string) (*natsserver.Server, error) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		return nil, err
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("nats-server did not start")
	}
	return ns, nil
}

// serveJetStream is the child: it runs until its parent closes stdin
// (or dies).
func serveJetStream(dir string) error {
	ns, err := startJetStream(dir)
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	fmt.Println(ns.ClientURL())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// jetStreamChild starts natsbench -serve-jetstream and returns its URL;
// stop ends it.
func jetStreamChild(dir string) (url string, stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "-serve-jetstream", dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			log.Printf("nats-server child: %v", err)
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("nats-server child: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

func run(redisAddr, eddyNATS string, messages, requests, conc int, inproc bool, out string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "natsbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var jsURL string
	if inproc {
		ns, err := startJetStream(dir)
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		jsURL = ns.ClientURL()
	} else {
		url, stop, err := jetStreamChild(dir)
		if err != nil {
			return err
		}
		defer stop()
		jsURL = url
	}

	const name = "natsbench"
	payload := make([]byte, 128)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	// The same messages on both sides: subjects natsbench.0 … natsbench.9.
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	defer rc.Close()
	if err := rc.Del(ctx, name).Err(); err != nil {
		return fmt.Errorf("eddy: %w", err)
	}
	pipe := rc.Pipeline()
	for i := range messages {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"subject", name + "." + strconv.Itoa(i%10), "data", payload}})
		if i%1000 == 999 || i == messages-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				return fmt.Errorf("eddy: %w", err)
			}
		}
	}
	nc, err := nats.Connect(jsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, AllowDirect: true}); err != nil {
		return err
	}
	for i := range messages {
		if _, err := js.PublishAsync(name+"."+strconv.Itoa(i%10), payload); err != nil {
			return err
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		return fmt.Errorf("nats-server: publishing timed out")
	}

	var results []result
	for _, target := range []struct{ name, url string }{{"eddy", eddyNATS}, {"nats-server", jsURL}} {
		for _, n := range []int{1, conc} {
			r, err := measure(target.url, name, messages, requests, n)
			if err != nil {
				return fmt.Errorf("%s: %w", target.name, err)
			}
			r.Target = target.name
			if target.name == "nats-server" {
				r.Process = "child"
				if inproc {
					r.Process = "in-process"
				}
			}
			results = append(results, r)
		}
	}
	fmt.Printf("Direct Get, %d messages of %d bytes, %d random-sequence requests per run\n", messages, len(payload), requests)
	fmt.Printf("%-12s %-11s %10s %10s %12s\n", "target", "requesters", "p50 µs", "p99 µs", "gets/s")
	for _, r := range results {
		fmt.Printf("%-12s %-11d %10.1f %10.1f %12.0f\n", r.Target, r.Requesters, r.P50Micros, r.P99Micros, r.OpsPerSec)
	}
	if out != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	}
	return nil
}

// measure sends requests Direct Gets of random sequences from n
// requesters, each on its own connection, and checks every reply.
func measure(url, stream string, messages, requests, n int) (result, error) {
	conns := make([]*nats.Conn, n)
	for i := range conns {
		nc, err := nats.Connect(url)
		if err != nil {
			return result{}, err
		}
		defer nc.Close()
		conns[i] = nc
	}
	subject := "$JS.API.DIRECT.GET." + stream
	lat := make([][]time.Duration, n)
	errs := make([]error, n)
	per := requests / n
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			l := make([]time.Duration, 0, per)
			for range per {
				body := []byte(`{"seq":` + strconv.Itoa(1+rng.IntN(messages)) + `}`)
				t0 := time.Now()
				m, err := conns[i].Request(subject, body, 5*time.Second)
				if err != nil {
					errs[i] = err
					return
				}
				if m.Header.Get("Nats-Sequence") == "" {
					errs[i] = fmt.Errorf("reply without a message: status %q", m.Header.Get("Status"))
					return
				}
				l = append(l, time.Since(t0))
			}
			lat[i] = l
		})
	}
	wg.Wait()
	wall := time.Since(start)
	var all []time.Duration
	for i := range n {
		if errs[i] != nil {
			return result{}, errs[i]
		}
		all = append(all, lat[i]...)
	}
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Nanoseconds()) / 1e3 }
	mode := "sequential"
	if n > 1 {
		mode = "concurrent"
	}
	return result{Mode: mode, Requesters: n, Requests: len(all), P50Micros: q(0.50), P99Micros: q(0.99),
		OpsPerSec: float64(len(all)) / wall.Seconds(), WallSeconds: wall.Seconds()}, nil
}
