package calibrate

import (
	"math"
	"slices"

	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// Class is how a figure is judged (the tolerance rule, docs/CALIBRATE.md).
type Class int

const (
	// Timing: the simulated mean within 10 % or 300 ms, whichever is
	// larger, of the real mean.
	Timing Class = iota
	// Count: equal in at least 90 % of the real repetitions (the real
	// count against the most common simulated count of the runs matched
	// to that repetition).
	Count
	// PartitionSeconds: the simulated mean within 25 % of the real mean.
	PartitionSeconds
)

func (c Class) String() string {
	switch c {
	case Count:
		return "count"
	case PartitionSeconds:
		return "partition-s"
	}
	return "timing"
}

// Figure is one figure both sides are judged on. Value reads it from one
// run's summary, the simulator's or the converted real one (the same
// harness.Summary fields, filled by the same definitions: harness for the
// simulator, realkafka's converter for real Kafka), so there is one
// definition per figure for both sides.
type Figure struct {
	Name  string // the CSV name
	Label string // short, for plots
	Doc   string // the meaning, for REPORT.md
	Unit  string // "ms", "", "partition-s"
	Class Class
	// fromRun: the name of experiments' per-run figure it is (RunFigures),
	// or "" when value computes it here.
	fromRun string
	value   func(s *harness.Summary, x *extras) float64
	// realKey, when set, is the summary.json `real` field the real side
	// needs for it; a repetition without it has not measured the figure.
	realKey string
}

// extras are what a figure needs beyond the summary: the instants each
// member first heard of the rebalance after the first fault (the
// simulator's trace; the real side's converter), nil when not measured.
type extras struct {
	noticeMs []float64
}

// Figures lists the judged figures, in table order.
var Figures = []Figure{
	{Name: "initial_join_ms", Label: "initial\njoin", Unit: "ms", Class: Timing,
		Doc:   "from the run's start to the end of the last settle episode that starts before the first fault (the group settled after its initial joins; none when that episode ran into the fault)",
		value: initialJoin},
	{Name: "fault_to_rebalance_ms", Label: "fault to\nrebal.", Unit: "ms", Class: Timing,
		Doc:   "from the first fault to the start of the first settle episode at or after it (a crash: the eviction; a leave: the LeaveGroup)",
		value: faultToRebalance},
	{Name: "fault_rebalance_ms", Label: "rebal.\nduration", Unit: "ms", Class: Timing, fromRun: "fault_rebalance_ms",
		Doc: "duration of that first settle episode"},
	{Name: "settled_after_fault_ms", Label: "fault to\nsettled", Unit: "ms", Class: Timing, fromRun: "settled_after_fault_ms",
		Doc: "from the first fault to the end of the last settle episode that starts at or after it"},
	{Name: "fault_to_failover_ms", Label: "fault to\nfailover", Unit: "ms", Class: Timing,
		Doc:   "from the first fault to the group's first coordinator failover (the new coordinator elected)",
		value: faultToFailover},
	{Name: "failover_recovery_ms", Label: "failover\nrecovery", Unit: "ms", Class: Timing, fromRun: "failover_recovery_ms",
		Doc: "from a coordinator failover until the new coordinator has the group Stable and has answered every live member"},
	{Name: "notice_spread_ms", Label: "notice\nspread", Unit: "ms", Class: Timing,
		Doc:   "how spread the rebalance notices of the members no fault touched are: the last minus the first member's first notice after the first fault (a heartbeat's REBALANCE_IN_PROGRESS or another rejoin; consumer protocol: RECONCILING); small: their heartbeats are phase-aligned",
		value: noticeSpread, realKey: "rebalance_notice_ms"},
	{Name: "evictions", Label: "evictions", Class: Count, fromRun: "evictions",
		Doc: "members the coordinator removed (session expiry, rebalance or sync timeout, poll-timeout leave)"},
	{Name: "false_evictions", Label: "false evictions", Class: Count, fromRun: "false_evictions",
		Doc: "of those, while the member's process was alive"},
	{Name: "leaves", Label: "leaves", Class: Count, fromRun: "leaves",
		Doc: "LeaveGroup removals that are not evictions (a close)"},
	{Name: "fences", Label: "fences", Class: Count, fromRun: "fences",
		Doc: "static members whose member id a new process replaced (KIP-345)"},
	{Name: "generations", Label: "generations", Class: Count, fromRun: "generations",
		Doc: "coordinator generation bumps (completed join phases) in the run"},
	{Name: "partitions_moved", Label: "partitions moved", Class: Count, fromRun: "partitions_moved",
		Doc: "partition handovers: a member starts owning a partition whose last owner was another member"},
	{Name: "unowned_partition_seconds", Label: "unowned", Unit: "partition-s", Class: PartitionSeconds, fromRun: "unowned_partition_seconds",
		Doc: "partition-seconds with no owner, the whole run"},
	{Name: "unowned_partition_seconds_after_first_fault", Label: "unowned after fault", Unit: "partition-s", Class: PartitionSeconds, fromRun: "unowned_partition_seconds_after_first_fault",
		Doc: "partition-seconds with no owner from the first fault on"},
	{Name: "double_owned_partition_seconds", Label: "double-owned", Unit: "partition-s", Class: PartitionSeconds, fromRun: "double_owned_partition_seconds",
		Doc: "partition-seconds with two owners at once"},
}

// figureValues computes every figure of one run, in Figures order (NaN:
// no value in this run).
func figureValues(sc *scenario.Scenario, s *harness.Summary, x *extras) []float64 {
	run := experiments.RunFigures(sc, s)
	names := experiments.FigureNames()
	out := make([]float64, len(Figures))
	for i, f := range Figures {
		if f.fromRun == "" {
			out[i] = f.value(s, x)
			continue
		}
		j := slices.Index(names, f.fromRun)
		if j < 0 {
			panic("calibrate: no run figure " + f.fromRun)
		}
		out[i] = run[j]
	}
	return out
}

// figureIndex returns a figure's place in Figures, -1 for an unknown name.
func figureIndex(name string) int {
	return slices.IndexFunc(Figures, func(f Figure) bool { return f.Name == name })
}

// initialJoin: the latest end, over the groups, of the settle episodes
// that start before the first fault (the whole run without one): the
// initial join may take several episodes (a member alone first, then the
// rest), and it is over when the last of them is. NaN when one of them was
// still open, or ended after the fault.
func initialJoin(s *harness.Summary, _ *extras) float64 {
	end := math.NaN()
	for _, g := range s.Groups {
		for _, r := range g.Rebalances {
			if g.FirstFaultMs >= 0 && r.StartMs >= g.FirstFaultMs {
				continue
			}
			if r.Incomplete || g.FirstFaultMs >= 0 && r.EndMs > g.FirstFaultMs {
				return math.NaN()
			}
			if math.IsNaN(end) || float64(r.EndMs) > end {
				end = float64(r.EndMs)
			}
		}
	}
	return end
}

func firstFault(s *harness.Summary) int64 {
	if len(s.Groups) == 0 {
		return -1
	}
	return s.Groups[0].FirstFaultMs
}

// faultToRebalance: the first settle episode starting at or after the
// first fault, over the groups.
func faultToRebalance(s *harness.Summary, _ *extras) float64 {
	at := firstFault(s)
	if at < 0 {
		return math.NaN()
	}
	best := math.NaN()
	for _, g := range s.Groups {
		for _, r := range g.Rebalances {
			if r.StartMs >= at && (math.IsNaN(best) || float64(r.StartMs-at) < best) {
				best = float64(r.StartMs - at)
			}
		}
	}
	return best
}

// faultToFailover: the first failover at or after the first fault.
func faultToFailover(s *harness.Summary, _ *extras) float64 {
	at := firstFault(s)
	if at < 0 {
		return math.NaN()
	}
	best := math.NaN()
	for _, g := range s.Groups {
		for _, f := range g.Failovers {
			if f.AtMs >= at && (math.IsNaN(best) || float64(f.AtMs-at) < best) {
				best = float64(f.AtMs - at)
			}
		}
	}
	return best
}

// noticeSpread: last minus first notice; needs two members that heard.
func noticeSpread(_ *harness.Summary, x *extras) float64 {
	if x == nil || len(x.noticeMs) < 2 {
		return math.NaN()
	}
	return slices.Max(x.noticeMs) - slices.Min(x.noticeMs)
}

// FigureValues is one run's value of every figure in Figures order (NaN:
// no value), from its summary alone: notice_spread_ms, which needs the
// run's notice instants, is NaN. The one definition of each figure for any
// view that sets real and simulated summaries side by side
// (cmd/realcompare).
func FigureValues(sc *scenario.Scenario, s *harness.Summary) []float64 {
	return figureValues(sc, s, nil)
}
