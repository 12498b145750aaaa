package harness

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// maxSwarmFaults bounds the faults one swarm may draw (TIGER_STYLE: a limit
// on everything); drawing stops there.
const maxSwarmFaults = 100_000

// expandFaults returns the run's fault timeline: a copy of the scenario's
// faults (the world resolves some in place, and the scenario may be run
// again) merged with the swarm's draws, sorted by At (stable: file faults
// before swarm faults at the same instant).
func expandFaults(sc *scenario.Scenario, seed uint64) []scenario.Fault {
	out := slices.Clone(sc.Faults)
	if sc.Swarm == nil {
		return out
	}
	out = append(out, SwarmFaults(sc, seed)...)
	scenario.SortFaults(out)
	return out
}

// SwarmFaults draws the swarm's random fault schedule for seed
// (docs/OBSERVABILITY.md). Each kind is a Poisson process at its rate per
// simulated minute over [From, Until), drawn from its own named stream
// "swarm/<kind>" of the seed: the same seed gives the same schedule, and
// changing one kind's rate leaves the others' draws unchanged. Targets are
// drawn among the groups' initial members (members that join faults add are
// left alone). The faults are marked Swarm and appear in the trace as
// ordinary fault events, so a run can be reproduced from its faults alone
// (write them into a file's faults: and drop the swarm: key) and shrunk.
func SwarmFaults(sc *scenario.Scenario, seed uint64) []scenario.Fault {
	sw := sc.Swarm
	if sw == nil {
		return nil
	}
	streams := sim.NewStreams(seed)
	var members []string
	for _, g := range sc.Groups {
		for i := 0; i < g.Members; i++ { // a cohort's members are numbered from its FirstIndex
			members = append(members, scenario.MemberName(g.ID, g.FirstIndex+i))
		}
	}
	var out []scenario.Fault
	// arrivals calls add at each arrival of a Poisson process of rate per
	// minute in the window, drawing from stream name.
	arrivals := func(name string, rate float64, add func(at time.Duration, rng *rand.Rand)) {
		if rate <= 0 {
			return
		}
		rng := streams.Stream("swarm/" + name)
		mean := float64(time.Minute) / rate
		t := sw.From
		for len(out) < maxSwarmFaults {
			t += time.Duration(rng.ExpFloat64() * mean)
			if t >= sw.Until {
				return
			}
			add(t, rng)
		}
	}
	pick := func(rng *rand.Rand) string { return members[rng.IntN(len(members))] }
	draw := func(d scenario.Dist, rng *rand.Rand) time.Duration {
		x := toSimDist(d).Draw(rng)
		if x <= 0 {
			x = time.Millisecond // windows are positive, as in the file syntax
		}
		return x
	}
	if len(members) > 0 {
		arrivals("crash", sw.Crash, func(at time.Duration, rng *rand.Rand) {
			m := pick(rng)
			down := draw(sw.CrashDowntime, rng)
			out = append(out,
				scenario.Fault{At: at, Kind: scenario.FaultCrash, Target: m, Swarm: true},
				scenario.Fault{At: at + down, Kind: scenario.FaultRestart, Target: m, Swarm: true})
		})
		arrivals("pause", sw.Pause, func(at time.Duration, rng *rand.Rand) {
			out = append(out, scenario.Fault{At: at, Kind: scenario.FaultPause, Target: pick(rng), For: draw(sw.PauseFor, rng), Swarm: true})
		})
		arrivals("partition", sw.Partition, func(at time.Duration, rng *rand.Rand) {
			out = append(out, scenario.Fault{At: at, Kind: scenario.FaultPartition,
				Peers: [2]string{pick(rng), scenario.CoordinatorName}, For: draw(sw.PartitionFor, rng), Swarm: true})
		})
	}
	arrivals("loss", sw.Loss, func(at time.Duration, rng *rand.Rand) {
		out = append(out, scenario.Fault{At: at, Kind: scenario.FaultLoss, Loss: sw.LossRate, For: draw(sw.LossFor, rng), Swarm: true})
	})
	arrivals("latency", sw.Latency, func(at time.Duration, rng *rand.Rand) {
		// The window's latency is drawn per message from LatencyValue, as
		// the file's latency fault does.
		out = append(out, scenario.Fault{At: at, Kind: scenario.FaultLatency, Latency: sw.LatencyValue, For: draw(sw.LatencyFor, rng), Swarm: true})
	})
	if ids := sc.GroupIDs(); len(ids) > 0 { // one per group, whatever its cohorts
		arrivals("coordinator-failover", sw.Failover, func(at time.Duration, rng *rand.Rand) {
			out = append(out, scenario.Fault{At: at, Kind: scenario.FaultCoordinatorFailover, Target: ids[rng.IntN(len(ids))], Swarm: true})
		})
	}
	return out
}

// phase is the realistic-timing offset of one start or fault: uniform over
// the whole milliseconds of [0, interval) from the named stream of the seed, so the instant of a
// start or fault relative to the heartbeats varies over seeds as it does
// between real deployments (issue 10). Zero under timing: exact.
func (w *world) phase(stream string, interval time.Duration) sim.Instant {
	if w.sc.Timing == scenario.TimingExact || interval <= 0 {
		return 0
	}
	// Whole milliseconds keep traces readable; the phase is still uniform
	// over the interval at the scale of heartbeats.
	if ms := int64(interval / time.Millisecond); ms > 0 {
		return sim.Instant(w.streams.Stream(stream).Int64N(ms)) * sim.Instant(time.Millisecond)
	}
	return sim.Instant(w.streams.Stream(stream).Int64N(int64(interval)))
}

// jitterFaults moves every fault of the run (explicit, swarm, rolling) by
// a phase of up to one heartbeat interval (the longest of the scenario's
// groups). The phase belongs to what the fault touches (its target member,
// broker or group, a partition's two ends, a filter's member, or "network"
// for loss and latency windows), drawn from the stream
// "timing/fault/<that>": faults on one target move together, so their order
// and the gaps between them stay as written (a crash and the restart after
// it), while faults on different targets get independent phases. A shrunk
// fault list, or swarm faults written into a file, keep their phases.
func (w *world) jitterFaults() {
	if w.sc.Timing == scenario.TimingExact || len(w.faults) == 0 {
		return
	}
	var hb time.Duration
	for i := range w.sc.Groups {
		hb = max(hb, w.sc.HeartbeatInterval(&w.sc.Groups[i]))
	}
	phases := map[string]sim.Instant{}
	for i := range w.faults {
		key := faultSubject(&w.faults[i])
		d, ok := phases[key]
		if !ok {
			d = w.phase("timing/fault/"+key, hb)
			phases[key] = d
		}
		w.faults[i].At += time.Duration(d)
	}
	scenario.SortFaults(w.faults)
}

// faultSubject names what a fault touches, for its timing phase.
func faultSubject(f *scenario.Fault) string {
	switch {
	case f.Kind == scenario.FaultPartition:
		return f.Peers[0] + "|" + f.Peers[1]
	case f.Kind == scenario.FaultFilter && f.Filter != nil && f.Filter.Member != "":
		return f.Filter.Member
	case f.Target != "":
		return f.Target
	}
	return "network"
}
