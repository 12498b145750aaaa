package realkafka

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
)

// What a repetition asks for is drawn from a seed of its own, derived from
// (scenario, broker version, repetition), so that repetitions differ where
// the simulator's seeds differ and a re-run of one repetition asks for the
// same: the workload each driver draws (poll.interval, callback.time, …)
// and the phase of each fault. Before this, every repetition ran the
// drivers with one seed (the same 5.9 s processing step recurred in every
// repetition of a scale-out) and made each fault at one instant after t0,
// hence at nearly one phase of the group's heartbeats (the survivors heard
// of a leave 1.0–1.3 s after it in every repetition), where the simulator
// draws the phase over the heartbeat interval (harness jitterFaults).

// RepetitionSeed is repetition rep's seed for scenario name on broker
// version: FNV-1a 64 of "name|version|rep", mixed (splitmix64).
func RepetitionSeed(name, version string, rep int) uint64 {
	return mix(hash([]byte(name + "|" + version + "|" + strconv.Itoa(rep))))
}

// mix is splitmix64's finaliser: a well-spread 64-bit function of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// draw is a value in [0, n) from seed and a name (n > 0).
func draw(seed uint64, name string, n int64) int64 {
	return int64(mix(seed^hash([]byte(name))) % uint64(n))
}

// DriverSeed is the workload seed of incarnation inc (1, 2, …) of member
// in a repetition with seed seed: each process draws its own, as each
// simulated process does from its own stream.
func DriverSeed(seed uint64, member string, inc int) int64 {
	return int64(mix(seed^hash([]byte("driver|"+member+"|"+strconv.Itoa(inc)))) >> 1)
}

// Phase is one fault subject's drawn phase in a repetition (meta.json).
type Phase struct {
	Subject  string `json:"subject"`
	WindowMs int64  `json:"window_ms"`
	PhaseMs  int64  `json:"phase_ms"`
	Why      string `json:"why"`
}

// ForRepetition returns the plan of repetition rep (1, 2, …): its seed,
// and every fault action moved by its subject's phase, drawn uniformly in
// whole milliseconds over the subject's window as the simulator draws it
// (harness jitterFaults): the actions of one subject move together, so a
// crash and its restart keep their gap; member starts do not move. The
// plan itself is not changed.
func (p *Plan) ForRepetition(rep int) *Plan {
	q := *p
	q.Rep = rep
	q.Seed = RepetitionSeed(p.Scenario.Name, p.BrokerVersion, rep)
	q.Actions = slices.Clone(p.Actions)
	q.Members = slices.Clone(p.Members)
	q.Phases = nil
	phase := map[string]time.Duration{}
	for i := range q.Actions {
		a := &q.Actions[i]
		if a.Subject == "" {
			continue
		}
		d, ok := phase[a.Subject]
		if !ok {
			if ms := a.Window.Milliseconds(); ms > 0 {
				d = time.Duration(draw(q.Seed, "phase|"+a.Subject, ms)) * time.Millisecond
			}
			phase[a.Subject] = d
			q.Phases = append(q.Phases, Phase{Subject: a.Subject, WindowMs: a.Window.Milliseconds(), PhaseMs: d.Milliseconds(), Why: a.WindowWhy})
		}
		a.At += d
		a.PhaseMs = d.Milliseconds()
	}
	sortActions(q.Actions)
	return &q
}

// faultSubject names what a fault touches, as harness faultSubject does
// (@this commit): a partition's two ends, else its target, else the network.
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

// maxPhaseWindow bounds a window as harness maxPhaseWindow does.
const maxPhaseWindow = 10 * time.Minute

// faultPhase is the subject of f and the window its phase is drawn over:
// none under timing: exact; the fault's own `jitter:` when written; else
// the least common period of the periodic timers of the groups it touches
// (heartbeat, auto-commit when on, a constant poll.interval), bounded —
// the window of harness phaseWindow (@this commit), mirrored here because
// the real side must ask for the same phases the simulator draws over.
func faultPhase(sc *scenario.Scenario, f *scenario.Fault) (subject string, window time.Duration, why string) {
	subject = faultSubject(f)
	if sc.Timing == scenario.TimingExact {
		return subject, 0, "timing: exact"
	}
	if f.JitterSet {
		return subject, f.Jitter, "jitter: " + f.Jitter.String() + " written on the fault"
	}
	var groups []int
	member := f.Target
	if f.Kind == scenario.FaultFilter && f.Filter != nil {
		member = f.Filter.Member
	}
	if gi, _, ok := sc.ResolveMember(member); ok && member != "" {
		groups = append(groups, gi)
	} else {
		for i := range sc.Groups {
			if sc.Groups[i].ID == f.Target || f.Kind == scenario.FaultPartition || f.Target == "" || strings.HasPrefix(f.Target, "broker-") || f.Target == "coordinator" {
				groups = append(groups, i)
			}
		}
	}
	if len(groups) == 0 {
		for i := range sc.Groups {
			groups = append(groups, i)
		}
	}
	var periods []time.Duration
	var names []string
	add := func(name string, d time.Duration) {
		if d > 0 && !slices.Contains(periods, d) {
			periods = append(periods, d)
			names = append(names, fmt.Sprintf("%s %v", name, d))
		}
	}
	for _, gi := range groups {
		g := &sc.Groups[gi]
		add("heartbeat", sc.HeartbeatInterval(g))
		if g.Client.AutoCommit {
			add("auto-commit", g.Client.AutoCommitInterval)
		}
		if pi := g.Workload.PollInterval; pi.Constant() {
			add("poll", constantOf(pi))
		}
	}
	for _, d := range periods {
		if window == 0 {
			window = d
			continue
		}
		a, b := window, d
		for b != 0 {
			a, b = b, a%b
		}
		if window/a > math.MaxInt64/d || window/a*d > maxPhaseWindow {
			window = maxPhaseWindow
			break
		}
		window = window / a * d
	}
	return subject, window, "least common period of " + strings.Join(names, ", ")
}

// constantOf is the value of a constant distribution (harness constantOf).
func constantOf(d scenario.Dist) time.Duration {
	switch d.Kind {
	case scenario.DistUniform:
		return d.Min
	case scenario.DistLognormal:
		return d.Median
	}
	return d.Value
}
