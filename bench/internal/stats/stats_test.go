package stats

import (
	"testing"
	"time"
)

func TestPercentileAndMedian(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		if got := Percentile(d, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("Percentile of nothing = %v", got)
	}
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{4, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if Ratio(1, 0) != 0 || Ratio(3, 2) != 1.5 || Ms(1500*time.Microsecond) != 1.5 {
		t.Error("Ratio or Ms")
	}
}

func TestPairedRatio(t *testing.T) {
	for _, c := range []struct {
		name     string
		num, den []float64
		want     float64
	}{
		{"none", nil, nil, 0},
		{"one round", []float64{3}, []float64{2}, 1.5},
		// Medians 40 and 50 give 0.8; every round says 0.9 or 1.
		{"rounds disagree with medians", []float64{36, 40, 60}, []float64{40, 50, 60}, 0.9},
		{"even count", []float64{1, 2, 3, 4}, []float64{1, 1, 1, 1}, 2.5},
		{"round without a denominator skipped", []float64{5, 2, 3}, []float64{0, 1, 1}, 2.5},
		{"unequal lengths use the common rounds", []float64{2, 4, 100}, []float64{1, 1}, 3},
	} {
		if got := PairedRatio(c.num, c.den); got != c.want {
			t.Errorf("%s: PairedRatio(%v, %v) = %v, want %v", c.name, c.num, c.den, got, c.want)
		}
	}
}
