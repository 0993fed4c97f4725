package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

func (s *server) summary() summary {
	var all, p50s, p99s []float64
	var flat []time.Duration
	for _, round := range s.all {
		flat = append(flat, round...)
		p50s = append(p50s, ms(percentile(round, 0.50)))
		p99s = append(p99s, ms(percentile(round, 0.99)))
	}
	for _, d := range flat {
		all = append(all, ms(d))
	}
	return summary{
		Server:      s.name,
		AllP50Ms:    ms(percentile(flat, 0.50)),
		AllP99Ms:    ms(percentile(flat, 0.99)),
		AllMaxMs:    slices.Max(all),
		RoundP50Ms:  median(p50s),
		RoundP99Ms:  median(p99s),
		ClientP50Ms: ms(percentile(s.client, 0.50)),
		ClientP99Ms: ms(percentile(s.client, 0.99)),
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

// percentile is the nearest-rank p-quantile of d (sorted in place); 0
// for no samples.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(p*float64(len(d))+0.999999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

// median of the rounds' figures (mean of the middle two for an even
// count), so one disturbed round on a shared machine moves it little.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
