// Package stats holds the summary statistics the benchmark programs share:
// nearest-rank percentiles of latencies and medians of per-round figures;
// and the writing of their JSON results.
package stats

import (
	"encoding/json"
	"os"
	"slices"
	"time"
)

// Percentile is the nearest-rank p-quantile of d (sorted in place); 0
// for no samples.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(p*float64(len(d))+0.999999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

// Median of the rounds' figures (mean of the middle two for an even
// count), so one disturbed round on a shared machine moves it little.
func Median(xs []float64) float64 {
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

// PairedRatio is the median of the round-by-round ratios num[i]/den[i],
// over the rounds both ran (den[i] > 0); 0 when there are none. The two
// servers of a round run back to back, so the machine's slower spells,
// which move both, cancel in a round's ratio: on a shared 2-CPU machine
// the ratio of the two medians can pick a fast round of one server and a
// slow one of the other.
func PairedRatio(num, den []float64) float64 {
	var rs []float64
	for i := range min(len(num), len(den)) {
		if den[i] > 0 {
			rs = append(rs, num[i]/den[i])
		}
	}
	return Median(rs)
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Ratio is a/b, 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// WriteJSON writes a program's result v as JSON to path (bench.sh merges
// the files); nothing when path is empty.
func WriteJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
