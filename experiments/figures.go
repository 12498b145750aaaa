package experiments

import (
	"math"
	"slices"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// figureDefs lists every per-run figure, in CSV column order, with its
// meaning (DESIGN.md "What a run measures"). Counts and integrals are
// summed over the scenario's groups; rebalance durations are pooled over
// the groups. NaN means "no value" (an empty CSV cell): e.g. no rebalance.
var figureDefs = []struct {
	name string
	doc  string
}{
	{"rebalance_count", "rebalances in the run (an incomplete one, still open at the end, counts)"},
	{"incomplete_rebalances", "rebalances still open when the run ended (left out of every duration)"},
	{"rebalance_duration_ms_mean", "mean rebalance duration in the run (complete rebalances)"},
	{"rebalance_duration_ms_p50", "median rebalance duration in the run"},
	{"rebalance_duration_ms_p95", "95th percentile of rebalance durations in the run (empirical)"},
	{"rebalance_duration_ms_p99", "99th percentile of rebalance durations in the run (empirical)"},
	{"rebalance_duration_ms_max", "longest rebalance in the run"},
	{"recovery_ms", "from the first fault to the end of the first rebalance that starts at or after it (empty: no such rebalance, or it was still open at the end)"},
	{"fault_rebalance_ms", "duration of that first rebalance at or after the first fault (empty as recovery_ms)"},
	{"rebalances_after_fault", "rebalances that start at or after the first fault (empty without faults)"},
	{"coordinator_dead_marks", "times a client marked the coordinator unknown/dead"},
	{"false_coordinator_dead_marks", "of those, while the coordinator was alive and still the coordinator"},
	{"evictions", "members the coordinator removed (session expiry, rebalance timeout, poll-timeout leave)"},
	{"false_evictions", "of those, while the member's process was alive"},
	{"coordinator_dead_marks_per_member_hour", "coordinator-dead marks per member-hour"},
	{"false_coordinator_dead_marks_per_member_hour", "false coordinator-dead marks per member-hour"},
	{"false_evictions_per_member_hour", "false evictions per member-hour"},
	{"member_hours", "simulated member-hours of live processes"},
	{"unowned_partition_seconds", "partition-seconds with no owner"},
	{"double_owned_partition_seconds", "partition-seconds with two owners at once"},
	{"final_generation", "the group generation at the end (first group)"},
	{"stable_at_end", "1 when every group was Stable at the end"},
	{"invariant_violations", "invariant violations (0 expected)"},
	{"events", "trace events (cost of the run)"},
}

// FigureNames returns the per-run figures in column order.
func FigureNames() []string {
	out := make([]string, len(figureDefs))
	for i, f := range figureDefs {
		out[i] = f.name
	}
	return out
}

// FigureDoc returns the one-line meaning of a figure.
func FigureDoc(name string) string {
	for _, f := range figureDefs {
		if f.name == name {
			return f.doc
		}
	}
	return ""
}

func isFigure(name string) bool {
	return slices.Contains(FigureNames(), name)
}

// figures turns one run's summary into its figure values, in figureDefs
// order. sc gives the fault timeline for recovery_ms.
func figures(sc *scenario.Scenario, s *harness.Summary) []float64 {
	out := make([]float64, len(figureDefs))
	var durations []float64
	var rebalances []harness.Rebalance
	var dead, falseDead, ev, falseEv, incomplete int
	var hours, unowned, double float64
	stable := 1.0
	gen := 0.0
	for i, g := range s.Groups {
		for _, r := range g.Rebalances {
			// An incomplete rebalance's "duration" is only the time left
			// in the run: counted, never averaged (as the harness does).
			if r.Incomplete {
				incomplete++
			} else {
				durations = append(durations, float64(r.DurationMs))
			}
			rebalances = append(rebalances, r)
		}
		dead += g.CoordinatorDeadMarks
		falseDead += g.FalseCoordinatorDeadMarks
		ev += g.Evictions
		falseEv += g.FalseEvictions
		hours += g.MemberHours
		unowned += g.UnownedPartitionSeconds
		double += g.DoubleOwnedPartitionSeconds
		if !g.StableAtEnd {
			stable = 0
		}
		if i == 0 {
			gen = float64(g.FinalGeneration)
		}
	}
	slices.Sort(durations)
	nan := math.NaN()
	mean, p50, p95, p99, max := nan, nan, nan, nan, nan
	if len(durations) > 0 {
		sum := 0.0
		for _, d := range durations {
			sum += d
		}
		mean = sum / float64(len(durations))
		p50 = empirical(0.50, durations)
		p95 = empirical(0.95, durations)
		p99 = empirical(0.99, durations)
		max = durations[len(durations)-1]
	}
	recovery, faultRebalance, afterFault := nan, nan, nan
	if len(sc.Faults) > 0 {
		at := sc.Faults[0].At.Milliseconds()
		first := -1
		afterFault = 0
		for i, r := range rebalances {
			if r.StartMs < at {
				continue
			}
			afterFault++
			if first < 0 || r.StartMs < rebalances[first].StartMs {
				first = i
			}
		}
		if first >= 0 && !rebalances[first].Incomplete {
			recovery = float64(rebalances[first].EndMs - at)
			faultRebalance = float64(rebalances[first].DurationMs)
		}
	}
	perHour := func(n int) float64 {
		if hours <= 0 {
			return nan
		}
		return float64(n) / hours
	}
	vals := []float64{
		float64(len(rebalances)), float64(incomplete), mean, p50, p95, p99, max,
		recovery, faultRebalance, afterFault,
		float64(dead), float64(falseDead), float64(ev), float64(falseEv),
		perHour(dead), perHour(falseDead), perHour(falseEv),
		hours, unowned, double, gen, stable,
		float64(len(s.InvariantViolations)), float64(s.Events),
	}
	copy(out, vals)
	if len(vals) != len(out) {
		panic("experiments: figure list and figure values disagree")
	}
	return out
}

// empirical is the empirical-CDF quantile of sorted xs (as gonum's
// stat.Quantile with stat.Empirical): the smallest sample with at least the
// fraction p of the samples at or below it.
func empirical(p float64, xs []float64) float64 {
	n := float64(len(xs))
	for i := range xs {
		if float64(i+1)/n >= p {
			return xs[i]
		}
	}
	return xs[len(xs)-1]
}
