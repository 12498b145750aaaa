package calibrate

import (
	"fmt"
	"slices"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// Run is one run's figure values: a simulated run (Seed > 0) matched to
// real repetition Rep (0: unmatched, the scenario as written), or a real
// repetition (Seed 0).
type Run struct {
	Rep    int
	Seed   uint64
	Values []float64 // in Figures order; NaN: no value
}

// simulate runs the scenario on seeds seeds·(N−1)+1 … seeds·N for real
// repetition N, matched to it (Match), or on seeds 1..seeds as written when
// there is none. Each repetition has its own seeds: with seeds 1..seeds for
// every repetition, the matched runs of different repetitions drew the same
// processing steps and wait overshoots (one long step counted once per
// repetition), so 9 runs held 3 independent workloads and the simulated
// interval was too narrow. It is a pure function of the scenario and the
// repetitions.
func simulate(sc *scenario.Scenario, reps []*Rep, seeds int) ([]Run, []string, error) {
	var runs []Run
	var notes []string
	// The members no fault touches: the notice spread is theirs (as
	// realkafka's converter measures it).
	untouched := map[string]bool{}
	for _, g := range sc.Groups {
		for i := 0; i < g.Members; i++ {
			untouched[scenario.MemberName(g.ID, g.FirstIndex+i)] = true
		}
	}
	for _, f := range sc.Faults {
		delete(untouched, f.Target)
		delete(untouched, f.Peers[0])
		delete(untouched, f.Peers[1])
	}
	one := func(s *scenario.Scenario, rep int, seed uint64, asMade map[int64]int64) error {
		x := &extras{}
		var at int64 = -1
		heard := map[string]bool{}
		opts := harness.Options{Observe: func(e *harness.TraceEvent) {
			if e.Kind == tracing.EvFault && at < 0 {
				at = int64(e.At)
			}
			if at < 0 || !untouched[e.Node] || heard[e.Node] {
				return
			}
			// A member's first notice of a rebalance: a rejoin request
			// (the heartbeat's REBALANCE_IN_PROGRESS, or any other cause
			// of a "(Re-)joining group"), or under the consumer protocol
			// its move to RECONCILING.
			if e.Kind == protocol.EvRejoinRequested || e.Kind == protocol.EvMemberState && e.State == "RECONCILING" {
				heard[e.Node] = true
				x.noticeMs = append(x.noticeMs, float64(int64(e.At)-at)/1e6)
			}
		}}
		res, err := harness.Run(s, seed, opts)
		if err != nil {
			return fmt.Errorf("%s seed %d: %w", s.Name, seed, err)
		}
		for i := range res.Summary.Groups {
			if made, ok := asMade[res.Summary.Groups[i].FirstFaultMs]; ok {
				res.Summary.Groups[i].FirstFaultMs = made
			}
		}
		runs = append(runs, Run{Rep: rep, Seed: seed, Values: figureValues(s, &res.Summary, x)})
		return nil
	}
	if len(reps) == 0 {
		for seed := 1; seed <= seeds; seed++ {
			if err := one(sc, 0, uint64(seed), nil); err != nil {
				return nil, nil, err
			}
		}
		return runs, nil, nil
	}
	note := func(n string) {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	for _, r := range reps {
		m, ns := Match(sc, r)
		for _, n := range ns {
			note(n)
		}
		asMade := faultsAsMade(sc, r)
		first := r.firstFaultMs()
		for k := 1; k <= seeds; k++ {
			seed := matchedSeed(r.N, k, seeds)
			run, made := m, asMade
			if len(r.Real.LastHeartbeatMs) > 0 && first >= 0 && len(sc.Groups) > 0 {
				last, err := lastHeartbeats(m, uint64(seed), first)
				if err != nil {
					return nil, nil, err
				}
				if d, _, ok := phaseShift(r.Real.LastHeartbeatMs, last, sc.HeartbeatInterval(&sc.Groups[0]), firstFaultTarget(sc)); ok && d != 0 {
					// The faults as made are the shifted ones.
					run, made = shiftFaults(m, d), map[int64]int64{}
					for k, v := range asMade {
						made[k+d.Milliseconds()] = v + d.Milliseconds()
					}
				}
				note("each fault placed at the phase of the heartbeat cycle the real one fell in (real.last_heartbeat_ms)")
			}
			if err := one(run, r.N, uint64(seed), made); err != nil {
				return nil, nil, err
			}
		}
	}
	return runs, notes, nil
}

// matchedSeed is the k-th simulated seed (1-based) matched to real
// repetition rep: repetition 1 has seeds 1..seeds, repetition 2 the next
// seeds, and so on.
func matchedSeed(rep, k, seeds int) int {
	return (rep-1)*seeds + k
}

// lastHeartbeats runs the matched scenario on seed up to the first fault
// and returns each member's last heartbeat sent at or before it (ms): the
// simulated heartbeat cycle the fault falls in. Events before the fault do
// not depend on it, so a run with it is that run.
func lastHeartbeats(sc *scenario.Scenario, seed uint64, firstMs int64) (map[string]float64, error) {
	last := map[string]float64{}
	limit := vtimeMs(firstMs)
	_, err := harness.Run(sc, seed, harness.Options{Observe: func(e *harness.TraceEvent) {
		if e.Kind == tracing.EvSend && e.Req && e.API == protocol.APIHeartbeat && int64(e.At) <= limit {
			last[e.Node] = float64(int64(e.At)) / 1e6
		}
	}})
	return last, err
}

func vtimeMs(ms int64) int64 { return ms * 1e6 }

// realRuns turns the repetitions into runs (Seed 0).
func realRuns(sc *scenario.Scenario, reps []*Rep) []Run {
	var out []Run
	for _, r := range reps {
		x := &extras{}
		if len(r.Real.RebalanceNoticeMs) > 0 {
			at := float64(firstFault(&r.Summary))
			keys := make([]string, 0, len(r.Real.RebalanceNoticeMs))
			for k := range r.Real.RebalanceNoticeMs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				x.noticeMs = append(x.noticeMs, r.Real.RebalanceNoticeMs[k]-at)
			}
		}
		out = append(out, Run{Rep: r.N, Values: figureValues(sc, &r.Summary, x)})
	}
	return out
}
