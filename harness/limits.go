package harness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// Time always advances, whatever the input (a scenario must never hang the
// simulator, however careless or hostile). A discrete-event simulation of a loop
// that costs no virtual time never ends, where the real program would spin
// a CPU. Two rules keep every run finite and turn such a loop into a
// finding:
//
//   - MinPollCost: one pass of the application's poll loop costs at least
//     this much virtual time — a poll.interval or poll.timeout draw below it
//     takes it (`poll.interval: 0ms` or `1ns` would otherwise replay a
//     billion polls per simulated second).
//   - a spin guard: a member that fires more than SpinEventsPerMs events
//     within one millisecond of virtual time is in a busy loop (a retry
//     without backoff at zero latency, a thread whose deadline never moves);
//     the run stops with a "spin" violation naming the member, instead of
//     hanging until the event budget.

// MinPollCost is the least virtual time one poll-loop pass takes.
const MinPollCost = time.Microsecond

// SpinEventsPerMs is the most events one member may fire within one
// millisecond of virtual time. Kafka's own timers are whole milliseconds
// (heartbeat.interval.ms >= 1), so a healthy member fires a handful.
const SpinEventsPerMs = 500

// atLeast is a distribution whose draws are at least min.
type atLeast struct {
	d   sim.Dist
	min time.Duration
}

func (a atLeast) Draw(r *rand.Rand) time.Duration { return max(a.d.Draw(r), a.min) }
func (a atLeast) String() string                  { return fmt.Sprintf("%v (at least %v)", a.d, a.min) }

// atLeastConst is atLeast of a constant, drawn without the two interface
// calls (the lazy poll replay draws twice per poll: a hot path).
type atLeastConst struct {
	v   time.Duration // max(c, min)
	c   sim.Constant
	min time.Duration
}

func (a atLeastConst) Draw(*rand.Rand) time.Duration { return a.v }
func (a atLeastConst) String() string                { return atLeast{a.c, a.min}.String() }

// Fixed is every draw's value: the client's lazy poll replay then replays a
// run of polls at once (client.fixedDist).
func (a atLeastConst) Fixed() time.Duration { return a.v }

// pollDist is a poll.interval or poll.timeout with MinPollCost applied.
func pollDist(d scenario.Dist) sim.Dist {
	sd := toSimDist(d)
	if c, ok := sd.(sim.Constant); ok {
		return atLeastConst{v: max(time.Duration(c), MinPollCost), c: c, min: MinPollCost}
	}
	if l, ok := sd.(sim.Lognormal); ok && l.P99 > l.Median && l.Median > 0 {
		// The default processing time (a lognormal, so that the members do
		// not phase-lock): drawn once per poll in
		// the lazy replay's loop, so its sigma is computed once here.
		return atLeastLognormal{l: l, median: float64(l.Median), sigma: math.Log(float64(l.P99)/float64(l.Median)) / z99, min: MinPollCost}
	}
	return atLeast{sd, MinPollCost}
}

// z99 is sim's: the standard normal's 0.99 quantile.
const z99 = 2.3263478740408408

// atLeastLognormal is atLeast of a sim.Lognormal with its sigma computed
// once: every draw is the one sim.Lognormal.Draw makes, to the bit
// (TestLognormalPollDrawsAsSim).
type atLeastLognormal struct {
	l             sim.Lognormal
	median, sigma float64
	min           time.Duration
}

func (a atLeastLognormal) Draw(r *rand.Rand) time.Duration {
	x := a.median * math.Exp(a.sigma*r.NormFloat64())
	if x > float64(math.MaxInt64/2) {
		x = float64(math.MaxInt64 / 2)
	}
	return max(time.Duration(x), a.min)
}
func (a atLeastLognormal) String() string { return fmt.Sprintf("%v (at least %v)", a.l, a.min) }

// Lognormal gives the client's lazy poll replay the draw's parameters, so
// that its loop makes the same draw inline, to the bit, without an
// interface call per poll (client.lognormalDist).
func (a atLeastLognormal) Lognormal() (median, sigma float64, min time.Duration) {
	return a.median, a.sigma, a.min
}

// spinning counts one event of slot si at now and reports a spin: the spin
// guard counts each member's events per millisecond of virtual time in its
// slot's spinWin, the millisecond being counted (bits 16 on: a run's
// instants, int64 nanoseconds, are under 2^44 ms) and the count in it (bits
// 0–15: the run stops at SpinEventsPerMs + 1): 8 bytes a member, in the
// slot's size class (slotSize).
func (w *world) spinning(si int32, now sim.Instant) bool {
	s := w.slots[si]
	ms := uint64(now) / uint64(time.Millisecond)
	v := s.spinWin
	if v>>16 != ms {
		v = ms << 16
	}
	v++
	s.spinWin = v
	if v&0xffff <= SpinEventsPerMs {
		return false
	}
	w.viol = append(w.viol, Violation{Checker: "spin", AtMs: int64(now) / 1e6,
		Message: fmt.Sprintf("%s fired more than %d events within one millisecond of virtual time: a busy loop (real Kafka would spin a CPU here, e.g. retrying without backoff at zero latency); the run stops",
			w.slots[si].name, SpinEventsPerMs)})
	w.q.Stop()
	return true
}

// spinSlot is the member slot an event belongs to, or -1 (a broker's).
func (w *world) spinSlot(e *ev) int32 {
	switch e.kind {
	case evAppTick, evHBTick, evResume, evStart:
		return e.idx
	case evDeliver:
		if n := int(e.to()) - len(w.brokers); n >= 0 {
			return int32(n)
		}
	}
	return -1
}

// DefaultMaxEvents bounds the events of one run (Options.MaxEvents; simrun
// run --max-events raises it): about a minute of wall time.
const DefaultMaxEvents = 200_000_000

// EstimatedEvents is a lower estimate of a run's events: each member's
// heartbeats over the run (a request and a response, each sent and
// delivered). A run estimated above its event budget is refused before it
// starts instead of running for hours (`duration: 1000000h`).
func EstimatedEvents(sc *scenario.Scenario) float64 {
	var n float64
	for i := range sc.Groups {
		g := &sc.Groups[i]
		if hb := sc.HeartbeatInterval(g); hb > 0 {
			n += float64(g.Members) * 4 * float64(sc.Duration) / float64(hb)
		}
	}
	return n
}

// checkBudget refuses a run whose estimate exceeds its event budget.
func checkBudget(sc *scenario.Scenario, maxEvents int64) error {
	if est := EstimatedEvents(sc); est > float64(maxEvents) {
		return fmt.Errorf("%s: about %.3g events expected (members × duration / heartbeat.interval.ms × 4), more than the limit of %d events; shorten duration, or raise the limit with --max-events %.0f",
			sc.Source, est, maxEvents, est*1.5)
	}
	return nil
}

// DefaultMaxMemory bounds one run's estimated memory (Options.MaxMemory;
// simrun run/explore --max-memory raise it).
const DefaultMaxMemory = 4 << 30

// Memory model of EstimatedMemory, measured on the classic and consumer
// protocols (peak RSS of simrun run): a base; each member's
// slot, client and coordinator state; each partition a group subscribes to
// (metadata, assignor input and output, owned lists: 110–150 B measured,
// for 1 to 8 groups over 0.5–2 M partitions); each subscribed topic of
// each member (its subscription in the join metadata); each kept trace
// event.
const (
	memBase              = 32 << 20
	memPerMember         = 4 << 10
	memPerGroupPartition = 160
	memPerMemberTopic    = 64
	memPerKeptEvent      = 160
)

// EstimatedMemory is an upper estimate of a run's memory in bytes.
func EstimatedMemory(sc *scenario.Scenario, keepTrace bool) float64 {
	final := map[string]int{} // a topic's largest partition count over the run
	for _, t := range sc.Topics {
		final[t.Name] = t.Partitions
	}
	for _, f := range sc.Faults {
		if f.Kind == scenario.FaultAddPartitions && f.Partitions > final[f.Target] {
			final[f.Target] = f.Partitions
		}
	}
	n := float64(memBase)
	for i := range sc.Groups {
		g := &sc.Groups[i]
		n += float64(g.Members) * (memPerMember + memPerMemberTopic*float64(len(g.Subscribe)))
		for _, t := range g.Subscribe {
			n += memPerGroupPartition * float64(final[t])
		}
	}
	if keepTrace {
		n += memPerKeptEvent * EstimatedEvents(sc)
	}
	return n
}

// CheckMemory refuses a run whose estimated memory exceeds opts.MaxMemory.
func CheckMemory(sc *scenario.Scenario, opts Options) error {
	limit := opts.MaxMemory
	if limit <= 0 {
		limit = DefaultMaxMemory
	}
	if est := EstimatedMemory(sc, opts.KeepTrace); est > float64(limit) {
		return fmt.Errorf("%s: about %s of memory expected (%d B per member, %d B per partition each group subscribes to%s), more than the limit of %s; use fewer partitions, members or groups, or raise the limit with --max-memory %s",
			sc.Source, bytesText(est), memPerMember, memPerGroupPartition, map[bool]string{true: ", the kept trace", false: ""}[opts.KeepTrace], bytesText(float64(limit)), bytesText(est*1.25))
	}
	return nil
}

// bytesText shows a byte count in GiB or MiB, as --max-memory reads it.
func bytesText(b float64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1fGiB", b/(1<<30))
	}
	return fmt.Sprintf("%.0fMiB", b/(1<<20))
}
