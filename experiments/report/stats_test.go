// Goal: the statistics over seeds match values computed by hand.
// Method: small samples whose mean, empirical quantiles, standard deviation
// and Student-t quantile are worked out in the comments.
package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarizeByHand(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name                        string
		xs                          []float64
		n                           int
		mean, p50, p95, p99, lo, hi float64
	}{
		// mean 20/5 = 4; sorted 1 2 3 4 10; empirical p50 = 3rd value (3/5 >= .5),
		// p95 = p99 = 5th value; s² = (9+4+1+0+36)/4 = 12.5, s = 3.5355339;
		// t(.975, 4) = 2.7764451; half = 2.7764451·3.5355339/√5 = 4.3899;
		// interval 4 ± 4.3899.
		{"five values", []float64{10, 2, 4, 1, 3}, 5, 4, 3, 10, 10, -0.389955, 8.389955},
		// mean 2; s = √2 (s² = (1+1)/1... two values 1 and 3: s² = 2); t(.975,1) = 12.7062;
		// half = 12.7062·1.41421/√2 = 12.7062.
		{"two values", []float64{1, 3}, 2, 2, 1, 3, 3, 2 - 12.706205, 2 + 12.706205},
		// NaN (no value in that run) is left out.
		{"nan ignored", []float64{nan, 5, nan, 7}, 2, 6, 5, 7, 7, 6 - 12.706205, 6 + 12.706205},
		// one value: no interval.
		{"one value", []float64{42}, 1, 42, 42, 42, 42, nan, nan},
		// constant sample: the interval collapses to the mean.
		{"constant", []float64{7, 7, 7}, 3, 7, 7, 7, 7, 7, 7},
		{"empty", nil, 0, nan, nan, nan, nan, nan, nan},
	}
	eq := func(t *testing.T, want, got float64, what string) {
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got), "%s: want NaN, got %v", what, got)
			return
		}
		assert.InDelta(t, want, got, 1e-5, what)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]float64(nil), c.xs...)
			s := Summarize(in)
			require.Equal(t, c.n, s.N)
			eq(t, c.mean, s.Mean, "mean")
			eq(t, c.p50, s.P50, "p50")
			eq(t, c.p95, s.P95, "p95")
			eq(t, c.p99, s.P99, "p99")
			eq(t, c.lo, s.CILo, "ci95_lo")
			eq(t, c.hi, s.CIHi, "ci95_hi")
			assert.Equal(t, len(c.xs), len(in))
			for i := range in {
				if !math.IsNaN(c.xs[i]) {
					assert.Equal(t, c.xs[i], in[i], "input not modified")
				}
			}
		})
	}
}

func TestTwentyValuesQuantiles(t *testing.T) {
	// 1..20: p50 = 10 (10/20 >= .5), p95 = 19 (19/20 >= .95), p99 = 20.
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(20 - i)
	}
	s := Summarize(xs)
	assert.Equal(t, 10.5, s.Mean)
	assert.Equal(t, 10.0, s.P50)
	assert.Equal(t, 19.0, s.P95)
	assert.Equal(t, 20.0, s.P99)
}
