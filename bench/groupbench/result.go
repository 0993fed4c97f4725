package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/eddy-streams/eddy/bench/internal/stats"
)

// result is what one run measured; bench.sh merges its JSON into the
// run's file under "groups".
type result struct {
	Entries    int                 `json:"entries"`
	Clients    int                 `json:"clients"`
	Count      int                 `json:"count"`
	Rounds     int                 `json:"rounds"`
	DurationS  float64             `json:"duration_s"`
	Calls      int                 `json:"calls"`
	Throughput []throughputSummary `json:"throughput"`
	// AckedPairedRatio is the median of the rounds' eddy/redis ratios of
	// acked entries/s (stats.PairedRatio); the table's ratio is that of
	// the two medians.
	AckedPairedRatio float64      `json:"acked_paired_ratio"`
	PEL              []pelSummary `json:"pel"`
	Setup            setup        `json:"setup"`
}

// throughputSummary is the median over rounds of one server's
// XREADGROUP+XACK runs.
type throughputSummary struct {
	Server        string  `json:"server"`
	AckedPerS     float64 `json:"acked_per_s"`
	OpsPerS       float64 `json:"ops_per_s"`
	P50Ms         float64 `json:"pair_p50_ms"`
	P99Ms         float64 `json:"pair_p99_ms"`
	RoundsDrained int     `json:"rounds_drained"`
	// Per round, in the order run, so a trend within a run shows.
	AckedPerSRounds []float64 `json:"acked_per_s_rounds"`
}

// pelSummary is the median over rounds of one call's per-round p50/p99
// against a PEL of a given size, on both servers.
type pelSummary struct {
	Call       string  `json:"call"`
	PEL        int     `json:"pel"`
	RedisP50Ms float64 `json:"redis_p50_ms"`
	RedisP99Ms float64 `json:"redis_p99_ms"`
	EddyP50Ms  float64 `json:"eddy_p50_ms"`
	EddyP99Ms  float64 `json:"eddy_p99_ms"`
	RatioP50   float64 `json:"ratio_p50"`
	RatioP99   float64 `json:"ratio_p99"`
	// Per round, in the order run, so a trend within a run (background
	// work settling, say) shows.
	RedisP50Rounds []float64 `json:"redis_p50_ms_rounds"`
	RedisP99Rounds []float64 `json:"redis_p99_ms_rounds"`
	EddyP50Rounds  []float64 `json:"eddy_p50_ms_rounds"`
	EddyP99Rounds  []float64 `json:"eddy_p99_ms_rounds"`
}

// setup holds single-run timings of the preparation, for information:
// they are one sample each, not medians.
type setup struct {
	FillS     map[string]float64            `json:"fill_s"`
	PELBuildS map[string]map[string]float64 `json:"pel_build_s"`
}

func (r *result) print(w io.Writer) {
	var red, ed throughputSummary
	for _, t := range r.Throughput {
		if t.Server == "redis" {
			red = t
		} else {
			ed = t
		}
	}
	fmt.Fprintf(w, "\nconsumer groups: XREADGROUP GROUP g c<i> COUNT %d STREAMS s > then XACK, %d clients, %gs or until drained, stream of %d entries, median of %d rounds\n",
		r.Count, r.Clients, r.DurationS, r.Entries, r.Rounds)
	fmt.Fprintf(w, "%-26s %12s %12s %8s\n", "metric", "redis", "eddy", "ratio")
	row := func(name string, a, b float64, prec int) {
		fmt.Fprintf(w, "%-26s %12.*f %12.*f %8.2f\n", name, prec, a, prec, b, stats.Ratio(b, a))
	}
	row("acked entries/s", red.AckedPerS, ed.AckedPerS, 0)
	row("ops/s (XREADGROUP+XACK)", red.OpsPerS, ed.OpsPerS, 0)
	row("pair p50 ms", red.P50Ms, ed.P50Ms, 3)
	row("pair p99 ms", red.P99Ms, ed.P99Ms, 3)
	fmt.Fprintf(w, "%-26s %12s %12s %8.2f\n", "acked/s, paired rounds", "", "", r.AckedPairedRatio)
	if red.RoundsDrained+ed.RoundsDrained > 0 {
		fmt.Fprintf(w, "(rounds that drained the stream before the time was up: redis %d, eddy %d)\n", red.RoundsDrained, ed.RoundsDrained)
	}

	fmt.Fprintf(w, "\nPEL cost: %d calls per round on one connection, median of %d rounds' p50/p99, ms\n", r.Calls, r.Rounds)
	fmt.Fprintf(w, "%-20s %8s %9s %9s %9s %9s %8s %8s\n", "call", "PEL", "redis_p50", "redis_p99", "eddy_p50", "eddy_p99", "r_p50", "r_p99")
	for _, p := range r.PEL {
		fmt.Fprintf(w, "%-20s %8d %9.3f %9.3f %9.3f %9.3f %8.2f %8.2f\n",
			p.Call, p.PEL, p.RedisP50Ms, p.RedisP99Ms, p.EddyP50Ms, p.EddyP99Ms, p.RatioP50, p.RatioP99)
	}
	// Growth from the smallest to the largest PEL (rows are by call, then
	// by size): near 1 when a call is not O(PEL).
	for i := 0; i < len(r.PEL); {
		j := i
		for j+1 < len(r.PEL) && r.PEL[j+1].Call == r.PEL[i].Call {
			j++
		}
		if a, b := r.PEL[i], r.PEL[j]; j > i {
			fmt.Fprintf(w, "%s p50 growth, PEL %d -> %d: redis x%.2f, eddy x%.2f\n",
				a.Call, a.PEL, b.PEL, stats.Ratio(b.RedisP50Ms, a.RedisP50Ms), stats.Ratio(b.EddyP50Ms, a.EddyP50Ms))
		}
		i = j + 1
	}

	fmt.Fprintf(w, "\nsetup (one run each, seconds): fill %d entries (pipelined XADD, %d conns): redis %.1f, eddy %.1f\n",
		r.Entries, fillConns, r.Setup.FillS["redis"], r.Setup.FillS["eddy"])
	for _, t := range r.PEL {
		if t.Call != r.PEL[0].Call {
			break
		}
		n := strconv.Itoa(t.PEL)
		fmt.Fprintf(w, "  PEL of %s (XREADGROUP COUNT %d, no ack): redis %.1f, eddy %.1f\n",
			n, pelBatch, r.Setup.PELBuildS["redis"][n], r.Setup.PELBuildS["eddy"][n])
	}
}
