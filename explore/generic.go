package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// The generic fault mix (`simrun explore --swarm default`): a random fault
// schedule drawn from the seed alone, for scenarios that have no swarm of
// their own. It is swarm testing (Groce et al., "Swarm Testing", ISSTA
// 2012): each seed first draws WHICH fault kinds it uses (each kind on with
// probability 1/2, from stream "explore/mix"), then each enabled kind is a
// Poisson process at its rate over the window, drawn from its own stream
// "explore/<kind>". A seed that leaves most kinds out reaches states a
// uniform mix rarely does (many pauses and no crash, say).
//
// Every fault is an ordinary file fault (scenario.Fault), so a finding's
// schedule is written into a scenario file as it is, and shrunk.

// genericKind is one kind of the mix: its rate per simulated minute when
// enabled, and how it draws one fault at an instant.
type genericKind struct {
	name string
	rate float64
	draw func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault
}

// optIn names the kinds that are off unless a campaign asks for them
// (--with): not one of the mix's defaults; asking for one leaves every
// default kind's schedule as it was.
var optIn = []string{"api-filter"}

func (k genericKind) optIn() bool { return slices.Contains(optIn, k.name) }

// genCtx is what the draws need from the scenario.
type genCtx struct {
	members []string // the initial members of every group
	groups  []string // group ids
	session time.Duration
	maxPoll time.Duration
	brokers int
}

func uniform(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	d := lo + time.Duration(rng.Int64N(int64(hi-lo)))
	return d.Truncate(time.Millisecond)
}

func (g *genCtx) member(rng *rand.Rand) string { return g.members[rng.IntN(len(g.members))] }
func (g *genCtx) group(rng *rand.Rand) string  { return g.groups[rng.IntN(len(g.groups))] }

// genericKinds is the mix, in a fixed order (the streams are named, so the
// order only fixes the stable sort of equal instants). Durations scale with
// the group's session timeout, so a pause or partition sometimes outlasts
// it and sometimes not.
var genericKinds = []genericKind{
	{"crash", 0.3, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		// A member process dies and is started again (crash with for).
		return []scenario.Fault{{At: at, Kind: scenario.FaultCrash, Target: g.member(rng), For: uniform(rng, 500*time.Millisecond, 2*g.session)}}
	}},
	{"restart", 0.2, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultRestart, Target: g.member(rng)}}
	}},
	{"pause", 0.3, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultPause, Target: g.member(rng), For: uniform(rng, 100*time.Millisecond, g.session*3/2)}}
	}},
	{"partition", 0.3, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultPartition, Peers: [2]string{g.member(rng), scenario.CoordinatorName},
			For: uniform(rng, 500*time.Millisecond, 2*g.session)}}
	}},
	{"loss", 0.15, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		p := float64(5+rng.IntN(46)) / 100 // 5 % … 50 %
		return []scenario.Fault{{At: at, Kind: scenario.FaultLoss, Loss: p, For: uniform(rng, 2*time.Second, time.Minute)}}
	}},
	{"slow-poll", 0.15, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultSlowPoll, Target: g.member(rng), For: uniform(rng, time.Second, g.maxPoll*3/2)}}
	}},
	{"coordinator-failover", 0.15, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultCoordinatorFailover, Target: g.group(rng)}}
	}},
	{"broker-crash", 0.1, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultCrash, Target: scenario.CoordinatorName, For: uniform(rng, time.Second, 40*time.Second)}}
	}},
	{"broker-host-down", 0.1, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultHostDown, Target: scenario.CoordinatorName, For: uniform(rng, time.Second, 40*time.Second)}}
	}},
	{"host-down", 0.1, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultHostDown, Target: g.member(rng), For: uniform(rng, time.Second, 2*g.session)}}
	}},
	{"rolling-restart", 0.05, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultRollingRestart, Target: g.group(rng),
			Interval: uniform(rng, time.Second, 10*time.Second), Downtime: uniform(rng, 100*time.Millisecond, 5*time.Second)}}
	}},
	{"join", 0.15, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		return []scenario.Fault{{At: at, Kind: scenario.FaultJoin, Target: g.group(rng)}}
	}},
	{"leave", 0.1, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		// A member leaves (LeaveGroup, process closed) and comes back later.
		m := g.member(rng)
		return []scenario.Fault{{At: at, Kind: scenario.FaultLeave, Target: m},
			{At: at + uniform(rng, time.Second, time.Minute), Kind: scenario.FaultRestart, Target: m}}
	}},
	// Opt-in kinds: after the defaults, so their on/off bits are drawn
	// after every default kind's.
	{"api-filter", 0.15, func(g *genCtx, at time.Duration, rng *rand.Rand) []scenario.Fault {
		// One member's requests of one group API are lost for a window,
		// however often TCP retransmits them (a message filter): what a
		// broken proxy, an ACL or a half-open connection does to one API
		// while the others get through. It is blind to any one bug: the
		// API is drawn from every group API.
		api := filterAPIs[rng.IntN(len(filterAPIs))]
		return []scenario.Fault{{At: at, Kind: scenario.FaultFilter, For: uniform(rng, 2*time.Second, 6*g.session),
			Filter: &scenario.MessageFilter{API: api, Member: g.member(rng), Direction: scenario.FilterRequest, Action: scenario.FilterDrop}}}
	}},
}

// filterAPIs are the APIs the api-filter kind drops.
var filterAPIs = scenario.APINames

// GenericKinds names the default kinds of the generic fault mix, in order.
func GenericKinds() []string {
	var out []string
	for _, k := range genericKinds {
		if !k.optIn() {
			out = append(out, k.name)
		}
	}
	return out
}

// OptInKinds names the kinds a campaign adds to the mix with --with.
func OptInKinds() []string {
	var out []string
	for _, k := range genericKinds {
		if k.optIn() {
			out = append(out, k.name)
		}
	}
	return out
}

// maxGenericFaults bounds one seed's schedule.
const maxGenericFaults = 10_000

// GenericWindow is the window the generic mix draws faults in: from 15 s
// after the last initial member starts (the group has formed) to the end of
// the run minus the tail the oracles need to judge it (tail). It fails
// when the scenario is too short for a window of at least 30 s.
func GenericWindow(sc *scenario.Scenario, tail time.Duration) (from, until time.Duration, err error) {
	from = windowStart(sc)
	until = sc.Duration - tail
	if until-from < minWindow {
		return 0, 0, fmt.Errorf("%s: duration %s is too short for the generic fault mix: it needs %s of faults window + %s of quiet tail after %s (set a longer duration, e.g. --set duration=%ds)",
			sc.Name, durfmt.Human(sc.Duration), durfmt.Human(minWindow), durfmt.Human(tail), durfmt.Human(from), int64(neededDuration(sc, tail)/time.Second))
	}
	return from, until, nil
}

// windowStart is where the generic mix's window opens: 15 s after the last
// initial member starts (the group has formed).
func windowStart(sc *scenario.Scenario) time.Duration {
	var from time.Duration
	for _, g := range sc.Groups {
		from = max(from, g.Start.At+time.Duration(max(g.Members-1, 0))*g.Start.Stagger)
	}
	return from + 15*time.Second
}

// neededDuration is the shortest whole-minute duration with room for the
// window's start, a minWindow fault window and the tail.
func neededDuration(sc *scenario.Scenario, tail time.Duration) time.Duration {
	need := windowStart(sc) + minWindow + tail
	return (need + time.Minute - 1).Truncate(time.Minute)
}

// GenericFaults draws the generic fault mix for seed in [from, until),
// leaving out the kinds named in without (GenericKinds names). A kind left
// out still draws its on/off bit, so the other kinds' schedules do not move.
func GenericFaults(sc *scenario.Scenario, seed uint64, from, until time.Duration, without ...string) []scenario.Fault {
	return GenericFaultsWith(sc, seed, from, until, nil, without)
}

// GenericFaultsWith is GenericFaults with the opt-in kinds of with added
// to the mix (OptInKinds).
func GenericFaultsWith(sc *scenario.Scenario, seed uint64, from, until time.Duration, with, without []string) []scenario.Fault {
	g := &genCtx{brokers: sc.Coordinator.Brokers, groups: sc.GroupIDs()}
	for _, c := range sc.Groups {
		for i := 0; i < c.Members; i++ {
			g.members = append(g.members, scenario.MemberName(c.ID, c.FirstIndex+i))
		}
		g.session = max(g.session, c.Client.SessionTimeout)
		g.maxPoll = max(g.maxPoll, c.Client.MaxPollInterval, c.Client.SessionTimeout)
	}
	if len(g.members) == 0 || len(g.groups) == 0 {
		return nil
	}
	streams := sim.NewStreams(seed)
	mix := streams.Stream("explore/mix")
	var out []scenario.Fault
	for _, k := range genericKinds {
		if mix.IntN(2) == 0 || slices.Contains(without, k.name) || k.optIn() && !slices.Contains(with, k.name) {
			continue
		}
		rng := streams.Stream("explore/" + k.name)
		mean := float64(time.Minute) / k.rate
		for t := from; len(out) < maxGenericFaults; {
			t += time.Duration(rng.ExpFloat64() * mean).Truncate(time.Millisecond)
			if t >= until {
				break
			}
			for _, f := range k.draw(g, t, rng) {
				if f.At < until { // a leave's return after the window is dropped
					out = append(out, f)
				}
			}
		}
	}
	scenario.SortFaults(out)
	return out
}

// minWindow is the shortest fault window the generic mix draws over.
const minWindow = 30 * time.Second

// FitDuration is the duration a scenario needs for the generic mix (0 when
// its own is long enough), and why, in one line: the members' start and 15
// s to settle, a fault window of at least 30 s, and the quiet tail (the
// settle bound, a minute more) in which an end-state oracle can tell a
// stuck group from one still recovering from the last fault.
func FitDuration(sc *scenario.Scenario) (time.Duration, string) {
	t := tail(sc)
	if _, _, err := GenericWindow(sc, t); err == nil {
		return 0, ""
	}
	why := fmt.Sprintf("the generic mix needs the start (%s, members started and settled) + a %s fault window + a quiet tail of %s "+
		"(the settle bound %s: session timeout + max(request timeout, rebalance timeout + 5 s) + the poll loop + 30 s, and a minute more, "+
		"so that an end-state oracle tells a stuck group from one still recovering)",
		durfmt.Human(windowStart(sc)), durfmt.Human(minWindow), durfmt.Human(t), durfmt.Human(harness.SettleBound(sc)))
	return neededDuration(sc, t), why
}
