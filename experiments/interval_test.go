package experiments

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIntervalsByHand checks each interval against published values.
func TestIntervalsByHand(t *testing.T) {
	// Garwood: 0 events -> [0, 3.689]; 1 -> [0.0253, 5.572]; 10 -> [4.795, 18.39]
	// (e.g. Ulm 1990, Table 1).
	lo, hi := Garwood(0)
	assert.Equal(t, 0.0, lo)
	assert.InDelta(t, 3.689, hi, 1e-3)
	lo, hi = Garwood(1)
	assert.InDelta(t, 0.0253, lo, 1e-4)
	assert.InDelta(t, 5.572, hi, 1e-3)
	lo, hi = Garwood(10)
	assert.InDelta(t, 4.795, lo, 1e-3)
	assert.InDelta(t, 18.39, hi, 1e-2)
	// Wilson: 0 of 10 -> [0, 0.2775]; 5 of 10 -> [0.2366, 0.7634].
	lo, hi = Wilson(0, 10)
	assert.InDelta(t, 0, lo, 1e-9)
	assert.InDelta(t, 0.2775, hi, 1e-4)
	lo, hi = Wilson(5, 10)
	assert.InDelta(t, 0.2366, lo, 1e-4)
	assert.InDelta(t, 0.7634, hi, 1e-4)
	// Order statistics: 20 seeds cannot bound a p95 from above (its lower
	// bound is the 17th value: P(Bin(20, 0.95) <= 16) = 0.016 <= 0.025 <
	// P(<= 17) = 0.075); the median of 20 lies between the 6th and 15th.
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	lo, hi = QuantileInterval(xs, 0.95)
	assert.True(t, math.IsInf(hi, 1))
	assert.Equal(t, 17.0, lo)
	lo, hi = QuantileInterval(xs, 0.5)
	assert.Equal(t, 6.0, lo)
	assert.Equal(t, 15.0, hi)
}

// 0 false evictions in 3 member-hours does not meet 0.01 per member-hour.
func TestRateRequirementNeedsExposure(t *testing.T) {
	req, err := ParseRequirement("false_evictions_per_member_hour <= 0.01")
	require.NoError(t, err)
	e := FigureInterval(KindRate, 0, []float64{0, 0, 0}, []float64{1, 1, 1})
	assert.Equal(t, 0.0, e.Value)
	assert.InDelta(t, 3.689/3, e.Hi, 1e-3)
	assert.False(t, req.holds(e))
	e = FigureInterval(KindRate, 0, []float64{0}, []float64{400})
	assert.True(t, req.holds(e), "0 in 400 member-hours: upper bound 0.0092")
}

func TestParseRequirementAndParam(t *testing.T) {
	for in, want := range map[string]Requirement{
		"recovery_ms.p95 <= 30000":              {Figure: "recovery_ms", Stat: "p95", Op: "<=", Bound: 30000},
		"rebalance_duration_ms.p95 < 5000":      {Figure: "rebalance_duration_ms_p95", Stat: "mean", Op: "<", Bound: 5000},
		"stable_at_end >= 0.9":                  {Figure: "stable_at_end", Stat: "mean", Op: ">=", Bound: 0.9},
		"false_evictions_per_member_hour<=0.01": {Figure: "false_evictions_per_member_hour", Stat: "mean", Op: "<=", Bound: 0.01},
		"unowned_partition_seconds.mean <= 1e3": {Figure: "unowned_partition_seconds", Stat: "mean", Op: "<=", Bound: 1000},
	} {
		got, err := ParseRequirement(in)
		require.NoError(t, err, in)
		want.Text = got.Text
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"recovery_ms", "nope <= 1", "recovery_ms <= x", "false_evictions_per_member_hour.p95 <= 1"} {
		_, err := ParseRequirement(bad)
		assert.Error(t, err, bad)
	}
	p, err := ParseTuneParam("faults[0].for=1s..25s:500ms")
	require.NoError(t, err)
	assert.Equal(t, TuneParam{Path: "faults[0].for", Column: "fault_for_ms", Lo: 1000, Hi: 25000, Step: 500, Duration: true}, p)
	p, err = ParseTuneParam("groups[0].client.session.timeout.ms=6000..60000")
	require.NoError(t, err)
	assert.Equal(t, 500.0, p.Step, "1/100 of the range, rounded down to 1-2-5")
	p, err = ParseTuneParam("groups[0].client.session.timeout.ms=17000..17000")
	require.NoError(t, err, "LO = HI: one value")
	assert.Equal(t, 17000.0, p.snap(16000), "the one value")
	for _, bad := range []string{"x", "a=1..", "a=5..1", "a=1s..5", "a=1..5:0", "a=5..5:1"} {
		_, err := ParseTuneParam(bad)
		assert.Error(t, err, bad)
	}
}

// Identical samples: the paired difference is exactly 0; a constant shift
// is exactly that shift.
func TestPairedDifference(t *testing.T) {
	a := []float64{1, 5, 2, math.NaN(), 7}
	m, lo, hi, n := PairedDifference(a, a)
	assert.Equal(t, 4, n)
	assert.Equal(t, []float64{0, 0, 0}, []float64{m, lo, hi})
	b := []float64{2, 6, 3, 4, 8}
	m, lo, hi, _ = PairedDifference(a, b)
	assert.Equal(t, []float64{1, 1, 1}, []float64{m, lo, hi})
}
