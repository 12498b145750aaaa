// Goal: each figure kind gets an interval fit for it, rare events
// included: zero events give an upper bound, no count or duration gets
// a negative lower bound. Reference values are the published tables:
// Garwood's exact Poisson limits (e.g. Ulm 1990, Table 1: k=0 → [0, 3.689],
// k=1 → [0.0253, 5.572], k=10 → [4.795, 18.39]) and Wilson's interval
// (Newcombe 1998, Table I: 0/20 → [0, 0.1611], 10/20 → [0.2993, 0.7007]).
package experiments

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGarwoodTable(t *testing.T) {
	for _, c := range []struct{ k, lo, hi float64 }{
		{0, 0, 3.689}, {1, 0.0253, 5.572}, {2, 0.2422, 7.225}, {10, 4.795, 18.39},
	} {
		lo, hi := Garwood(c.k)
		assert.InDelta(t, c.lo, lo, 0.001, "k=%v lo", c.k)
		assert.InDelta(t, c.hi, hi, 0.01, "k=%v hi", c.k)
	}
}

func TestWilsonTable(t *testing.T) {
	lo, hi := Wilson(0, 20)
	assert.InDelta(t, 0.0, lo, 1e-12)
	assert.InDelta(t, 0.1611, hi, 0.0005)
	lo, hi = Wilson(10, 20)
	assert.InDelta(t, 0.2993, lo, 0.0005)
	assert.InDelta(t, 0.7007, hi, 0.0005)
	lo, hi = Wilson(20, 20)
	assert.InDelta(t, 0.8389, lo, 0.0005)
	assert.Equal(t, 1.0, hi)
}

func TestBootstrapSeeded(t *testing.T) {
	xs := []float64{120, 113, 3100, 2900, 140, 2950, 118, 3050, 125, 3000}
	m1, lo1, hi1 := BootstrapMean(xs, StreamSeed("p1", "recovery_ms"))
	m2, lo2, hi2 := BootstrapMean(xs, StreamSeed("p1", "recovery_ms"))
	assert.Equal(t, [3]float64{m1, lo1, hi1}, [3]float64{m2, lo2, hi2}, "same seed, same interval")
	assert.Less(t, lo1, m1)
	assert.Greater(t, hi1, m1)
	assert.GreaterOrEqual(t, lo1, 113.0, "a bootstrap of the mean stays inside the data")
	assert.LessOrEqual(t, hi1, 3100.0)
}

// TestIntervalsPerKind runs summarize on the figure rows of 20 seeds as a
// sweep has them and checks the interval of each kind.
func TestIntervalsPerKind(t *testing.T) {
	n := len(figureDefs)
	runs := make([][]float64, 20)
	for s := range runs {
		runs[s] = make([]float64, n)
		runs[s][figureIndex("member_hours")] = 0.5
		runs[s][figureIndex("valid")] = 1
		runs[s][figureIndex("stable_at_end")] = 1
		runs[s][figureIndex("unowned_partition_seconds")] = float64(s % 3) // mean small, spread wide
		runs[s][figureIndex("recovery_ms")] = 1000 + float64(s)*10
	}
	// Two false dead marks in 20 runs (the false-dead-vs-loss shape whose t
	// interval went negative: 0.1 [-0.044, 0.244]).
	runs[3][figureIndex("false_coordinator_dead_marks")] = 1
	runs[11][figureIndex("false_coordinator_dead_marks")] = 1

	st := summarize(figureIndex("false_coordinator_dead_marks"), runs)
	assert.InDelta(t, 0.1, st.Mean, 1e-12)
	assert.InDelta(t, 0.2422/20, st.CILo, 1e-4, "Garwood on the total (2) over 20 runs")
	assert.InDelta(t, 7.225/20, st.CIHi, 1e-3)

	st = summarize(figureIndex("false_evictions"), runs)
	assert.Equal(t, 0.0, st.Mean)
	assert.Equal(t, 0.0, st.CILo)
	assert.InDelta(t, 3.689/20, st.CIHi, 1e-3, "zero events in 20 runs: an upper bound, not [0, 0]")

	st = summarize(figureIndex("false_evictions_per_member_hour"), runs)
	assert.Equal(t, 0.0, st.Mean)
	assert.InDelta(t, 3.689/10, st.CIHi, 1e-3, "zero events in 10 member-hours")

	st = summarize(figureIndex("false_coordinator_dead_marks_per_member_hour"), runs)
	assert.InDelta(t, 0.2, st.Mean, 1e-12, "pooled: 2 events over 10 member-hours")

	st = summarize(figureIndex("stable_at_end"), runs)
	assert.Equal(t, 1.0, st.Mean)
	assert.InDelta(t, 0.8389, st.CILo, 5e-4, "Wilson 20/20")

	st = summarize(figureIndex("unowned_partition_seconds"), runs)
	assert.GreaterOrEqual(t, st.CILo, 0.0)

	st = summarize(figureIndex("recovery_ms"), runs)
	assert.Greater(t, st.CILo, 1000.0)
	assert.Less(t, st.CIHi, 1190.0)

	// Every figure of every kind: no negative lower bound anywhere.
	for f := range figureDefs {
		st := summarize(f, runs)
		if !math.IsNaN(st.CILo) {
			assert.GreaterOrEqual(t, st.CILo, 0.0, figureDefs[f].name)
		}
		if k, _ := KindOf(figureDefs[f].name, "mean"); k == KindMean {
			assert.NotContains(t, figureDefs[f].name, "_ms", "a duration gets the bootstrap, not t")
		}
	}
}
