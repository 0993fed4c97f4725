package main

import (
	"slices"
	"time"
)

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
