//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/stats"
)

func (s *server) summary() summary {
	var all, p50s, p99s []float64
	var flat []time.Duration
	for _, round := range s.all {
		flat = append(flat, round...)
		p50s = append(p50s, stats.Ms(stats.Percentile(round, 0.50)))
		p99s = append(p99s, stats.Ms(stats.Percentile(round, 0.99)))
	}
	for _, d := range flat {
		all = append(all, stats.Ms(d))
	}
	return summary{
		Server:      s.name,
		AllP50Ms:    stats.Ms(stats.Percentile(flat, 0.50)),
		AllP99Ms:    stats.Ms(stats.Percentile(flat, 0.99)),
		AllMaxMs:    slices.Max(all),
		RoundP50Ms:  stats.Median(p50s),
		RoundP99Ms:  stats.Median(p99s),
		ClientP50Ms: stats.Ms(stats.Percentile(s.client, 0.50)),
		ClientP99Ms: stats.Ms(stats.Percentile(s.client, 0.99)),
		P99Rounds:   p99s,
	}
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\nblocked XREAD wake-up: %d clients in XREAD BLOCK 0 STREAMS s $, one XADD, time until all replied; %d rounds x %d wake-ups, ms\n",
		r.Clients, r.Rounds, r.Repeats)
	fmt.Fprintf(w, "%-8s %9s %9s %9s %14s %14s %11s %11s\n",
		"server", "all_p50", "all_p99", "all_max", "round_med_p50", "round_med_p99", "client_p50", "client_p99")
	for _, s := range r.Servers {
		fmt.Fprintf(w, "%-8s %9.2f %9.2f %9.2f %14.2f %14.2f %11.2f %11.2f\n",
			s.Server, s.AllP50Ms, s.AllP99Ms, s.AllMaxMs, s.RoundP50Ms, s.RoundP99Ms, s.ClientP50Ms, s.ClientP99Ms)
	}
	fmt.Fprintf(w, "eddy/redis: p50 %.2f, p99 %.2f (target p99 <= 1.5)\n", r.RatioP50, r.RatioP99)
}
