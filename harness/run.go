package harness

import (
	"fmt"
	"io"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// Options adjusts one run. The zero value runs with no trace output.
type Options struct {
	// TraceJSONL, when non-nil, receives the trace as JSON lines.
	TraceJSONL io.Writer
	// KeepTrace keeps every trace event in Result.Trace (tests, explain, perfetto).
	KeepTrace bool
	// Observe, when set, sees every trace event as it is recorded. The
	// event is reused after the call: copy what you keep.
	Observe func(*TraceEvent)
	// EagerPolls makes every application poll() its own event instead of
	// replaying uneventful polls lazily (client.Config.Sim.EagerPolls).
	EagerPolls bool
	// ExactHeartbeatDeadlines turns off client.Config.Sim.HeartbeatWakeCadence
	// for every member: the heartbeat thread then acts exactly at each
	// deadline instead of at its next wake-up every retry.backoff.ms, as
	// Kafka's does (the model before the wake-up cadence was modelled; a
	// measurement switch, not a scenario key).
	ExactHeartbeatDeadlines bool
	// MaxEvents bounds the run's events (0: DefaultMaxEvents). A run
	// estimated above it is refused before it starts (EstimatedEvents); one
	// that reaches it stops with a "progress" violation.
	MaxEvents int64
	// MaxMemory bounds the run's estimated memory in bytes (0:
	// DefaultMaxMemory): a run estimated above it (EstimatedMemory) is
	// refused before it starts, with the flag that raises the limit, so
	// that a Go out-of-memory is never how a run ends.
	MaxMemory int64
}

// Result is what one run produced.
type Result struct {
	Summary Summary
	Stop    sim.StopReason
	// Trace holds every event when Options.KeepTrace was set.
	Trace []TraceEvent
	// Observations are the run's typed observations, in trace order
	// (observe.go): every view of the run reads these.
	Observations []Observation
}

// Run builds one world from the scenario, runs it for one seed and returns
// its summary. It is a pure function of (scenario, seed): no wall clock, no
// global random source, no goroutines.
func Run(sc *scenario.Scenario, seed uint64, opts Options) (*Result, error) {
	maxEvents := opts.MaxEvents
	if maxEvents <= 0 {
		maxEvents = DefaultMaxEvents
	}
	if err := checkBudget(sc, maxEvents); err != nil {
		return nil, err
	}
	if err := CheckMemory(sc, opts); err != nil {
		return nil, err
	}
	w, err := newWorld(sc, seed, opts)
	if err != nil {
		return nil, err
	}
	w.maxEvents = maxEvents
	stop := w.run()
	if w.rec.werr != nil {
		return nil, fmt.Errorf("writing trace: %w", w.rec.werr)
	}
	res := &Result{Summary: w.summary(), Stop: stop, Trace: w.rec.events, Observations: w.watch.obs}
	return res, nil
}

// finish closes the books at the end of the run: member-seconds of live
// processes and the ownership integrals up to the end instant.
func (w *world) finish() {
	now := w.q.Now()
	for _, s := range w.slots {
		if s.alive {
			w.groups[s.group].m.memberSeconds += w.watch.aliveSeconds(s, now)
		}
	}
	for _, g := range w.groups {
		g.m.integrate(now)
	}
	for _, c := range w.checks {
		if msg := c.final(w.view); msg != "" {
			w.viol = append(w.viol, Violation{Checker: c.name(), AtMs: int64(now) / 1e6, Message: msg})
		}
	}
	for _, g := range w.groups {
		if m := g.m; m.recovering && m.failoverAt >= m.from {
			m.failovers = append(m.failovers, Failover{AtMs: int64(m.failoverAt) / 1e6, RecoveryMs: -1})
			m.recovering = false
		}
		if m := g.m; m.open {
			w.watch.closeEpisode(g, now, true)
		}
	}
}

func (w *world) summary() Summary {
	s := Summary{
		Scenario:            w.sc.Name,
		Seed:                w.seed,
		SimulatedMs:         int64(w.q.Now()) / 1e6,
		Events:              w.rec.count,
		TraceSHA256:         w.rec.sum(),
		InvariantViolations: w.viol,
	}
	if s.InvariantViolations == nil {
		s.InvariantViolations = []Violation{}
	}
	firstFault := int64(-1)
	if len(w.groups) > 0 && w.groups[0].m.firstFault != sim.Never {
		firstFault = int64(w.groups[0].m.firstFault) / 1e6
	}
	for _, g := range w.groups {
		m := g.m
		gs := GroupSummary{
			ID:                                     g.id,
			Rebalances:                             m.rebalances,
			RebalanceCount:                         len(m.rebalances),
			CoordinatorDeadMarks:                   m.deadMarks,
			FalseCoordinatorDeadMarks:              m.falseDeadMarks,
			Evictions:                              m.evictions,
			FalseEvictions:                         m.falseEvictions,
			MemberHours:                            Round(m.memberSeconds/3600, 6),
			UnownedPartitionSeconds:                Round(m.unownedPS, 3),
			UnownedPartitionSecondsAfterFirstFault: Round(m.unownedAfterFaultPS, 3),
			PartitionsMoved:                        m.moved,
			PartitionsMovedAfterFirstFault:         m.movedAfterFault,
			Failovers:                              m.failovers,
			DoubleOwnedPartitionSeconds:            Round(m.doubleOwnedPS, 3),
			FinalGeneration:                        m.coordGen,
			StableAtEnd:                            m.stableAtEnd(),
			FatalErrors:                            m.fatal,
			SettleEpisodes:                         len(m.rebalances),
			Generations:                            m.generations,
			ClientRebalances:                       m.clientRebalances,
			Leaves:                                 m.leaves,
			Fences:                                 m.fences,
			FirstFaultMs:                           firstFault,
		}
		if gs.Rebalances == nil {
			gs.Rebalances = []Rebalance{}
		}
		if gs.FinalGeneration < 0 {
			gs.FinalGeneration = 0
		}
		gs.RebalanceDurationMs = RebalanceDurationStats(m.rebalances)
		gs.FillRates()
		s.Groups = append(s.Groups, gs)
	}
	s.Valid, s.InvalidReason = w.validity()
	s.MeasureFromMs = w.sc.MeasureFrom.Milliseconds()
	s.FaultPhaseWindows = w.phaseNotes
	return s
}

// validity says whether the run measures the configuration at all
// (Summary.Valid): not when a member stopped on a fatal error (a
// configuration the broker rejects), a group never reached Stable, or the
// event budget or the livelock guard ended the run.
func (w *world) validity() (bool, string) {
	for _, v := range w.viol {
		if v.Checker == "progress" {
			return false, "the run was cut short: " + v.Message
		}
	}
	for _, g := range w.groups {
		if len(g.m.fatal) > 0 {
			return false, "group " + g.id + ": a member stopped on a fatal error (" + g.m.fatal[0] + ")"
		}
	}
	for _, g := range w.groups {
		if !g.m.everStable {
			return false, "group " + g.id + " never reached Stable"
		}
	}
	return true, ""
}

// durationStats summarises durations with gonum/stat: the mean, and
// quantiles by the empirical CDF (stat.Empirical: the smallest sample with
// at least the given fraction of samples at or below it).
// RebalanceDurationStats is a group's rebalance_duration_ms: the
// statistics of its complete settle episodes' durations (one definition for
// the simulator's summary and simrun real's).
func RebalanceDurationStats(rs []Rebalance) Stats {
	var d []float64
	for _, r := range rs {
		if !r.Incomplete {
			d = append(d, float64(r.DurationMs))
		}
	}
	return DurationStats(d)
}

// DurationStats is the mean and empirical-CDF quantiles of durations.
func DurationStats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return Stats{
		Mean: Round(stat.Mean(xs, nil), 3),
		P50:  stat.Quantile(0.50, stat.Empirical, xs, nil),
		P95:  stat.Quantile(0.95, stat.Empirical, xs, nil),
		P99:  stat.Quantile(0.99, stat.Empirical, xs, nil),
		Max:  xs[len(xs)-1],
	}
}

// Round rounds x to digits decimals, as every figure of the summary is.
func Round(x float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}
