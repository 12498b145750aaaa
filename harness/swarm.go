package harness

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/internal/durfmt"
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
// between real deployments (one exact instant made every seed give the
// same rebalance). Zero under timing: exact.
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
// a phase drawn uniformly over a window after its written instant. The
// window is the fault's own `jitter:` when the file names one, else the
// least common period of the periodic timers of what it touches
// (phaseWindow: heartbeat, auto-commit, a constant poll interval): those
// timers repeat with that period, so every instant of one cycle is equally
// likely, and a rate no longer depends on the instant written in the file
// (measured when the phase was drawn over one heartbeat interval only: an
// 8 s pause at `at:` 90 s and 93 s gave 5.3 % and 36.5 % false evictions). The phase belongs to
// what the fault touches (its target member, broker or group, a
// partition's two ends, a filter's member, or "network" for loss and
// latency windows), drawn from the stream "timing/fault/<that>": faults on
// one target move together (the first of them names the window), so their
// order and the gaps between them stay as written (a crash and the restart
// after it), while faults on different targets get independent phases. A
// shrunk fault list, or swarm faults written into a file, keep their
// phases. w.phaseNotes says what was drawn (the summary's
// fault_phase_windows).
func (w *world) jitterFaults() {
	if w.sc.Timing == scenario.TimingExact || len(w.faults) == 0 {
		return
	}
	type drawn struct {
		d   sim.Instant
		win time.Duration
		why string
	}
	phases := map[string]drawn{}
	var order []string
	for i := range w.faults {
		f := &w.faults[i]
		key := faultSubject(f)
		p, ok := phases[key]
		if !ok {
			if f.JitterSet {
				p.win, p.why = f.Jitter, "jitter: "+durfmt.Human(f.Jitter)+" written on the fault"
			} else {
				p.win, p.why = w.phaseWindow(f)
			}
			p.d = w.phase("timing/fault/"+key, p.win)
			phases[key] = p
			order = append(order, key)
		}
		f.At += time.Duration(p.d)
	}
	scenario.SortFaults(w.faults)
	// One line per distinct window, in the order the faults were written.
	seen := map[string]bool{}
	for _, key := range order {
		p := phases[key]
		note := "uniform over " + durfmt.Human(p.win) + " (" + p.why + ")"
		if p.win <= 0 {
			note = "none (" + p.why + ")"
		}
		if !seen[note] {
			seen[note] = true
			w.phaseNotes = append(w.phaseNotes, note)
		}
	}
}

// maxPhaseWindow bounds a fault's phase window: timers whose least common
// period is longer (3001 ms and 5000 ms: 4 h 10 min) would push the fault
// out of any run, and over such a window the cycle is not what a reader
// of one run sees either.
const maxPhaseWindow = 10 * time.Minute

// phaseWindow is the least common period of the periodic timers of the
// members a fault touches (its member's group, its group, or every group
// for a broker, the network or a partition), and what it is made of:
// heartbeat.interval.ms (the broker's for a consumer-protocol group),
// auto.commit.interval.ms when auto-commit is on, and poll.interval when it
// is a constant (a distribution has no period). Bounded by maxPhaseWindow.
func (w *world) phaseWindow(f *scenario.Fault) (time.Duration, string) {
	var groups []int
	member := f.Target
	if f.Kind == scenario.FaultFilter && f.Filter != nil {
		member = f.Filter.Member
	}
	if gi, _, ok := w.sc.ResolveMember(member); ok && member != "" {
		groups = append(groups, gi)
	} else {
		for i := range w.sc.Groups {
			if w.sc.Groups[i].ID == f.Target || f.Kind == scenario.FaultPartition || f.Target == "" || strings.HasPrefix(f.Target, "broker-") || f.Target == "coordinator" {
				groups = append(groups, i)
			}
		}
	}
	if len(groups) == 0 {
		for i := range w.sc.Groups {
			groups = append(groups, i)
		}
	}
	var periods []time.Duration
	var names []string
	add := func(name string, d time.Duration) {
		if d <= 0 || slices.Contains(periods, d) {
			return
		}
		periods = append(periods, d)
		names = append(names, name+" "+durfmt.Human(d))
	}
	for _, gi := range groups {
		g := &w.sc.Groups[gi]
		add("heartbeat", w.sc.HeartbeatInterval(g))
		if g.Client.AutoCommit {
			add("auto-commit", g.Client.AutoCommitInterval)
		}
		if pi := g.Workload.PollInterval; pi.Constant() {
			add("poll", constantOf(pi))
		}
	}
	win := time.Duration(0)
	for _, d := range periods {
		if win == 0 {
			win = d
			continue
		}
		win = lcm(win, d)
		if win > maxPhaseWindow || win <= 0 {
			win = maxPhaseWindow
			break
		}
	}
	why := "least common period of " + strings.Join(names, ", ")
	if len(periods) == 1 {
		why = strings.Join(names, "")
	}
	if win == maxPhaseWindow {
		why += ", bounded at " + durfmt.Human(maxPhaseWindow)
	}
	return win, why
}

// constantOf is the value of a constant distribution.
func constantOf(d scenario.Dist) time.Duration {
	switch d.Kind {
	case scenario.DistUniform:
		return d.Min
	case scenario.DistLognormal:
		return d.Median
	}
	return d.Value
}

func gcd(a, b time.Duration) time.Duration {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b time.Duration) time.Duration {
	g := gcd(a, b)
	if a/g > math.MaxInt64/b {
		return -1 // overflow: beyond any bound
	}
	return a / g * b
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
