package report

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Stats summarises one figure over the seeds of one point.
//
// Mean is the arithmetic mean (stat.Mean, equal weights). P50, P95 and P99
// are empirical quantiles (stat.Quantile with stat.Empirical on the sorted
// sample: the smallest value with at least that fraction of the sample at
// or below it — no interpolation, so every quantile is an observed value).
// CILo and CIHi are the two-sided 95% Student-t interval of the mean:
// mean ± t(0.975, n−1)·s/√n with s the sample standard deviation
// (stat.StdDev, n−1 denominator). It needs n ≥ 2 (otherwise NaN); it is
// exact for normal data and approximate otherwise — for rare-event counts
// (a few false evictions over many seeds) read it as a rough guide, and it
// may extend below zero.
// Values that are NaN (no value in that run) are left out; N counts the rest.
type Stats struct {
	N                   int
	Mean, P50, P95, P99 float64
	CILo, CIHi          float64
}

// Summarize computes Stats of xs (NaN entries ignored). xs is not modified.
func Summarize(xs []float64) Stats {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	nan := math.NaN()
	s := Stats{N: len(v), Mean: nan, P50: nan, P95: nan, P99: nan, CILo: nan, CIHi: nan}
	if len(v) == 0 {
		return s
	}
	slices.Sort(v)
	s.Mean = stat.Mean(v, nil)
	s.P50 = stat.Quantile(0.50, stat.Empirical, v, nil)
	s.P95 = stat.Quantile(0.95, stat.Empirical, v, nil)
	s.P99 = stat.Quantile(0.99, stat.Empirical, v, nil)
	if len(v) >= 2 {
		sd := stat.StdDev(v, nil)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(v) - 1)}.Quantile(0.975)
		half := t * sd / math.Sqrt(float64(len(v)))
		s.CILo, s.CIHi = s.Mean-half, s.Mean+half
		if sd == 0 {
			s.CILo, s.CIHi = s.Mean, s.Mean
		}
	}
	return s
}
