package experiments

import (
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// figureDefs lists every per-run figure, in CSV column order (new figures
// are appended, so existing columns keep their place), with its meaning
// (DESIGN.md "What a run measures"); KindOf (interval.go) says which
// interval it gets.
// Counts and integrals are summed over the scenario's groups; rebalance
// durations are pooled over the groups. NaN means "no value" (an empty CSV
// cell): e.g. no rebalance. A rate names the count it divides (events) by
// member_hours.
var figureDefs = []struct {
	name   string
	doc    string
	events string // a rate: the count figure it divides by member_hours
}{
	{"rebalance_count", "settle episodes in the run (from leaving Stable to every member Stable; one can span many generations; an incomplete one counts)", ""},
	{"incomplete_rebalances", "settle episodes still open when the run ended (left out of every duration)", ""},
	{"rebalance_duration_ms_mean", "mean settle-episode duration in the run (complete episodes)", ""},
	{"rebalance_duration_ms_p50", "median settle-episode duration in the run", ""},
	{"rebalance_duration_ms_p95", "95th percentile of settle-episode durations in the run (empirical)", ""},
	{"rebalance_duration_ms_p99", "99th percentile of settle-episode durations in the run (empirical)", ""},
	{"rebalance_duration_ms_max", "longest settle episode in the run", ""},
	{"recovery_ms", "from the first fault of any kind (explicit, swarm, rolling) to the end of the first settle episode that starts at or after it (empty: no such episode, or it was still open at the end)", ""},
	{"fault_rebalance_ms", "duration of that first settle episode at or after the first fault (empty as recovery_ms)", ""},
	{"rebalances_after_fault", "settle episodes that start at or after the first fault of any kind (empty without faults)", ""},
	{"coordinator_dead_marks", "times a client marked the coordinator unknown/dead", ""},
	{"false_coordinator_dead_marks", "of those, while the coordinator was alive and still the coordinator", ""},
	{"evictions", "members the coordinator removed (session expiry, rebalance, sync or new-member timeout, group.max.size, poll-timeout leave)", ""},
	{"false_evictions", "of those, while the member's process was alive", ""},
	{"coordinator_dead_marks_per_member_hour", "coordinator-dead marks per member-hour (pooled over seeds)", "coordinator_dead_marks"},
	{"false_coordinator_dead_marks_per_member_hour", "false coordinator-dead marks per member-hour (pooled over seeds)", "false_coordinator_dead_marks"},
	{"false_evictions_per_member_hour", "false evictions per member-hour (pooled over seeds)", "false_evictions"},
	{"member_hours", "simulated member-hours of live processes (in the measurement window)", ""},
	{"unowned_partition_seconds", "partition-seconds with no owner (in the measurement window)", ""},
	{"double_owned_partition_seconds", "partition-seconds with two owners at once", ""},
	{"final_generation", "the group generation at the end (first group)", ""},
	{"stable_at_end", "1 when every group was Stable at the end", ""},
	{"invariant_violations", "invariant violations (0 expected)", ""},
	{"events", "trace events (cost of the run)", ""},
	{"valid", "1 when the run is valid: no fatal error, every group reached Stable, no budget or livelock cut (summary valid)", ""},
	{"generations", "coordinator generation bumps (completed join phases)", ""},
	{"client_rebalances", "completed rebalances summed over members (the clients' rebalance-total)", ""},
	{"leaves", "LeaveGroup removals that are not evictions (close)", ""},
	{"fences", "static members whose member id a new process replaced (KIP-345)", ""},
	{"fatal_errors", "members stopped by a fatal error (the run is invalid)", ""},
	{"evictions_per_member_hour", "evictions per member-hour (pooled over seeds)", "evictions"},
	{"rebalances_per_member_hour", "settle episodes per member-hour (pooled over seeds)", "rebalance_count"},
	{"unowned_partition_seconds_after_first_fault", "partition-seconds with no owner from the first fault of any kind on", ""},
	{"settle_episodes", "settle episodes in the run (the same number as rebalance_count, under the name that says what it counts)", ""},
	{"failover_recovery_ms", "mean over the run's coordinator failovers of the time to recover (new coordinator answered every live member, group Stable; empty: none recovered)", ""},
	{"partitions_moved", "partition handovers: a member starts owning a partition whose last owner was another member (getting back what it had is not a move)", ""},
	{"partitions_moved_after_first_fault", "partition handovers from the first fault of any kind on (empty without faults)", ""},
	{"settled_after_fault_ms", "from the first fault of any kind to the end of the last settle episode that starts at or after it: when a many-step fault (a rolling restart or upgrade) is over for the group (empty: no such episode, or the last was still open at the end)", ""},
	{"generations_after_fault", "coordinator generation bumps (completed join phases) in the settle episodes that start at or after the first fault of any kind: the rebalances a broker log shows (empty without faults)", ""},
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

// RunFigures returns one run's figure values in FigureNames order: the one
// definition of every per-run figure, for the summaries of simulated and of
// real runs alike (simrun calibrate).
func RunFigures(sc *scenario.Scenario, s *harness.Summary) []float64 { return figures(sc, s) }

// figures turns one run's summary into its figure values, in figureDefs
// order. Fault-relative figures count from the summary's first fault of any
// kind.
func figures(_ *scenario.Scenario, s *harness.Summary) []float64 {
	out := make([]float64, len(figureDefs))
	var durations []float64
	var rebalances []harness.Rebalance
	var dead, falseDead, ev, falseEv, incomplete, gens, clientReb, leaves, fences, fatal, moved, movedAfter int
	var hours, unowned, double, afterFaultPS float64
	var recoveries []float64
	stable := 1.0
	gen := 0.0
	firstFault := int64(-1)
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
		gens += g.Generations
		clientReb += g.ClientRebalances
		leaves += g.Leaves
		fences += g.Fences
		fatal += len(g.FatalErrors)
		hours += g.MemberHours
		unowned += g.UnownedPartitionSeconds
		double += g.DoubleOwnedPartitionSeconds
		afterFaultPS += g.UnownedPartitionSecondsAfterFirstFault
		moved += g.PartitionsMoved
		movedAfter += g.PartitionsMovedAfterFirstFault
		for _, f := range g.Failovers {
			if f.RecoveryMs >= 0 {
				recoveries = append(recoveries, float64(f.RecoveryMs))
			}
		}
		if !g.StableAtEnd {
			stable = 0
		}
		if i == 0 {
			gen = float64(g.FinalGeneration)
			firstFault = g.FirstFaultMs
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
	recovery, faultRebalance, afterFault, afterFaultUnowned, movedAfterFault, settled, gensAfter := nan, nan, nan, nan, nan, nan, nan
	if firstFault >= 0 {
		at := firstFault
		first, last := -1, -1
		afterFault, gensAfter = 0, 0
		afterFaultUnowned = afterFaultPS
		movedAfterFault = float64(movedAfter)
		for i, r := range rebalances {
			if r.StartMs < at {
				continue
			}
			afterFault++
			gensAfter += float64(r.Generations)
			if first < 0 || r.StartMs < rebalances[first].StartMs {
				first = i
			}
			if last < 0 || r.EndMs > rebalances[last].EndMs || r.Incomplete {
				last = i
			}
		}
		if last >= 0 && !rebalances[last].Incomplete {
			settled = float64(rebalances[last].EndMs - at)
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
	failoverRecovery := nan
	if len(recoveries) > 0 {
		failoverRecovery = stat.Mean(recoveries, nil)
	}
	valid := 0.0
	if s.Valid {
		valid = 1
	}
	vals := []float64{
		float64(len(rebalances)), float64(incomplete), mean, p50, p95, p99, max,
		recovery, faultRebalance, afterFault,
		float64(dead), float64(falseDead), float64(ev), float64(falseEv),
		perHour(dead), perHour(falseDead), perHour(falseEv),
		hours, unowned, double, gen, stable,
		float64(len(s.InvariantViolations)), float64(s.Events),
		valid, float64(gens), float64(clientReb), float64(leaves), float64(fences), float64(fatal),
		perHour(ev), perHour(len(rebalances)), afterFaultUnowned, float64(len(rebalances)), failoverRecovery,
		float64(moved), movedAfterFault, settled, gensAfter,
	}
	copy(out, vals)
	if len(vals) != len(out) {
		panic("experiments: figure list and figure values disagree")
	}
	return out
}

// rateEvents names the count figure a per-member-hour rate divides
// (rebalances_per_member_hour → rebalance_count).
func rateEvents(rate string) string {
	for _, f := range figureDefs {
		if f.name == rate && f.events != "" {
			return f.events
		}
	}
	return strings.TrimSuffix(rate, "_per_member_hour")
}

// summarize computes the statistics of figure fi over the seeds of one
// point: mean and empirical quantiles as report.Summarize, and the 95 %
// interval its kind gets (interval.go: KindOf, FigureInterval); a rate's
// mean is the pooled rate. runs[s] are the figures of seed s+1.
func summarize(fi int, runs [][]float64) report.Stats {
	col := make([]float64, 0, len(runs))
	for _, run := range runs {
		col = append(col, run[fi])
	}
	st := report.Summarize(col)
	f := figureDefs[fi]
	kind, _ := KindOf(f.name, "mean")
	var est Estimate
	if kind == KindRate {
		ev, hours := make([]float64, len(runs)), make([]float64, len(runs))
		for s, run := range runs {
			ev[s], hours[s] = run[figureIndex(f.events)], run[figureIndex("member_hours")]
		}
		est = FigureInterval(kind, 0, ev, hours)
		st.Mean = est.Value
	} else {
		est = FigureInterval(kind, 0, col, nil)
	}
	st.CILo, st.CIHi = est.Lo, est.Hi
	return st
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
