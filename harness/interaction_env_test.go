package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/datadriven"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/classic/client"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// interactionEnv drives one whole world (brokers, members, network) a few
// events at a time from a script, as etcd-io/raft's rafttest.InteractionEnv
// drives a raft group. It holds the very world Run builds and fires its
// events through the same sim.Queue.Run and world.fire, one budget at a
// time: nothing here reaches into the world by a path Run does not take
// (TestInteractionMatchesRun proves it on three scenarios). The only
// decisions a script adds are faults — a partition, its heal, a dropped
// message — and each is the scenario fault of that kind (FaultPartition,
// FaultFilter), started and ended by the world's own applyFault/endFault,
// as Run does at a fault's instant.
type interactionEnv struct {
	w   *world
	end sim.Instant // the scenario's duration: no command runs past it
	// out collects the events recorded since the command began (copies).
	out []TraceEvent
	// level says which events a command prints (log-level).
	level logLevel
	// show is the command's own subject (the message a deliver waits
	// for), printed whatever the level; nil: none.
	show func(TraceEvent) bool
	// cuts are the partitions a script started and has not healed, by
	// fault index.
	cuts []int
}

// logLevel is how much of the trace a command prints.
type logLevel uint8

const (
	levelNone   logLevel = iota // nothing
	levelEvents                 // model and harness events, messages dropped for good, and error responses delivered (the default)
	levelMsgs                   // every event: sends, deliveries, TCP's losses and retransmissions too
)

// foreverFor is the window of a script's partition or drop filter: longer
// than any scenario, so only the script's heal (or the drop) ends it.
const foreverFor = time.Duration(1 << 62)

func newInteractionEnv(sc *scenario.Scenario, seed uint64) (*interactionEnv, error) {
	e := &interactionEnv{end: sim.Instant(sc.Duration), level: levelEvents}
	w, err := newWorld(sc, seed, Options{Observe: func(ev *TraceEvent) {
		c := *ev
		c.Partitions = slices.Clone(ev.Partitions)
		e.out = append(e.out, c)
	}})
	if err != nil {
		return nil, err
	}
	w.maxEvents = DefaultMaxEvents
	e.w = w
	return e, nil
}

// fireOne fires the next event if it is due by until; false when there is
// none (the queue is empty or its next event is later). It is Run's loop
// with an event budget of one more event.
func (e *interactionEnv) fireOne(until sim.Instant) bool {
	q := e.w.q
	if q.Next() > until || q.Next() == sim.Never {
		return false
	}
	q.Run(sim.Budget{Until: until, MaxEvents: q.Fired() + 1}, e.w.fire)
	return true
}

// runUntil fires events up to until, stopping early after the first event
// whose recorded events satisfy stop (nil: never); it reports whether stop
// was met. Virtual time ends at until when stop is not met, as Run's time
// budget leaves it.
func (e *interactionEnv) runUntil(until sim.Instant, stop func() bool) bool {
	until = min(until, e.end)
	for {
		if stop != nil && stop() {
			return true
		}
		if !e.fireOne(until) {
			// Nothing is due by until: Run fires nothing and, as at the end
			// of a run, moves the clock to until.
			e.w.q.Run(sim.Budget{Until: until}, e.w.fire)
			return stop != nil && stop()
		}
	}
}

// finish runs the world to the scenario's end and closes its books, as Run
// does after its loop.
func (e *interactionEnv) finish() Summary {
	e.runUntil(e.end, nil)
	e.w.finish()
	return e.w.summary()
}

// inFlight counts the network deliveries scheduled and not yet fired
// (messages, retransmissions, connection setup).
func (e *interactionEnv) inFlight() int { return len(e.w.dels) - len(e.w.delFree) }

// settled reports whether every group is Stable with every live member
// settled in its generation and no rebalance open (the summary's
// stable_at_end, now).
func (e *interactionEnv) settled() bool {
	for _, g := range e.w.groups {
		if !g.m.stableAtEnd() {
			return false
		}
	}
	return true
}

// inject starts a script's fault now, as fire starts a scenario's fault at
// its instant; it returns the fault's index.
func (e *interactionEnv) inject(f scenario.Fault) int {
	f.At = e.w.q.Now().Duration()
	e.w.faults = append(e.w.faults, f)
	i := len(e.w.faults) - 1
	e.w.applyFault(i)
	return i
}

// handle runs one script command and returns its output.
func (e *interactionEnv) handle(t *testing.T, c *datadriven.Case) string {
	e.out, e.show = e.out[:0], nil
	var b strings.Builder
	switch c.Cmd {
	case "step":
		n := 1
		if v, ok := c.Arg("n"); ok {
			n = atoiArg(t, c, v)
		}
		for i := 0; i < n && e.fireOne(e.end); i++ {
		}
	case "tick":
		d := durationArg(t, c, positional(t, c))
		e.runUntil(e.w.q.Now().Add(d), nil)
	case "run-until":
		until := e.end
		if v, ok := c.Arg("at"); ok {
			until = sim.Instant(durationArg(t, c, v))
		}
		match := eventMatcher(t, c, "at")
		var stop func() bool
		if slices.ContainsFunc(c.Args, func(a datadriven.Arg) bool { return a.Key != "at" }) {
			stop = func() bool { return slices.ContainsFunc(e.out, match) }
		}
		if !e.runUntil(until, stop) && stop != nil {
			fmt.Fprintf(&b, "no such event by %s\n", e.w.q.Now())
		}
	case "deliver":
		match := eventMatcher(t, c)
		want := func(ev TraceEvent) bool { return ev.Kind == tracing.EvDeliver && match(ev) }
		e.show = want
		if !e.runUntil(e.end, func() bool { return slices.ContainsFunc(e.out, want) }) {
			fmt.Fprintf(&b, "no such delivery by %s\n", e.w.q.Now())
		}
	case "drop":
		e.drop(t, c, &b)
	case "partition":
		e.partition(t, c)
	case "heal":
		for _, i := range e.cuts {
			e.w.endFault(i)
		}
		e.cuts = e.cuts[:0]
	case "stabilize":
		if !e.runUntil(e.end, func() bool { return e.inFlight() == 0 && e.settled() }) {
			fmt.Fprintf(&b, "not stable by %s\n", e.w.q.Now())
		}
	case "state":
		e.writeState(&b)
		return b.String()
	case "log-level":
		switch positional(t, c) {
		case "none":
			e.level = levelNone
		case "events":
			e.level = levelEvents
		case "msgs":
			e.level = levelMsgs
		default:
			t.Fatalf("%s: log-level none|events|msgs", c.Pos)
		}
		return ""
	case "summary":
		s := e.finish()
		writeSummary(&b, &s)
		return b.String() // not the events up to the end: the figures are the point
	default:
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	}
	e.writeEvents(&b)
	return b.String()
}

// drop drops the next message of one API between a member and a broker:
// a FaultFilter with action drop on that member, API and direction (a
// middlebox losing it), ended as soon as it dropped one. A message already
// handed to TCP is not touched: TCP delivers it, so "next" means the next
// one sent.
func (e *interactionEnv) drop(t *testing.T, c *datadriven.Case, b *strings.Builder) {
	api, _ := c.Arg("api")
	from, hasFrom := c.Arg("from")
	to, hasTo := c.Arg("to")
	mf := &scenario.MessageFilter{API: api, Action: scenario.FilterDrop}
	switch {
	case hasTo && e.w.slotByName(to) != nil:
		mf.Member, mf.Direction = to, scenario.FilterResponse
	case hasFrom && e.w.slotByName(from) != nil:
		mf.Member, mf.Direction = from, scenario.FilterRequest
	default:
		t.Fatalf("%s: drop api=API from=MEMBER (a request) or to=MEMBER (a response)", c.Pos)
	}
	require.NotZero(t, apiByName(api), "%s: unknown api %q", c.Pos, api)
	i := e.inject(scenario.Fault{Kind: scenario.FaultFilter, For: foreverFor, Filter: mf})
	dropped := func() bool {
		return slices.ContainsFunc(e.out, func(ev TraceEvent) bool { return ev.Kind == tracing.EvDrop && ev.Reason == "filter" })
	}
	if !e.runUntil(e.end, dropped) {
		fmt.Fprintf(b, "nothing to drop by %s\n", e.w.q.Now())
	}
	e.w.endFault(i)
}

// partition cuts the paths between two nodes (members, brokers or
// "coordinator"), both ways or one way (`partition a b one-way`: a → b).
func (e *interactionEnv) partition(t *testing.T, c *datadriven.Case) {
	var peers []string
	dir := scenario.DirectionBoth
	for _, a := range c.Args {
		if a.Key == "one-way" {
			dir = scenario.DirectionOneWay
			continue
		}
		peers = append(peers, a.Key)
	}
	require.Len(t, peers, 2, "%s: partition A B [one-way]", c.Pos)
	i := e.inject(scenario.Fault{Kind: scenario.FaultPartition, Peers: [2]string{peers[0], peers[1]}, Direction: dir, For: foreverFor})
	e.cuts = append(e.cuts, i)
}

// writeEvents prints the command's events at the environment's level.
func (e *interactionEnv) writeEvents(b *strings.Builder) {
	for i := range e.out {
		ev := &e.out[i]
		switch {
		case e.show != nil && e.show(*ev):
		case e.level == levelNone:
			continue
		case e.level == levelEvents && tracing.IsMessageEvent(ev.Kind) && ev.Kind != tracing.EvDrop &&
			(ev.Kind != tracing.EvDeliver || ev.Err == protocol.None):
			continue
		}
		writeTimelineEvent(b, ev)
	}
}

// writeState prints every coordinator's and member's state, compactly:
// what a reader checks a step against.
func (e *interactionEnv) writeState(b *strings.Builder) {
	w := e.w
	fmt.Fprintf(b, "at %s, %d in flight\n", w.q.Now(), e.inFlight())
	for _, br := range w.brokers {
		status := "up"
		if br.down {
			status = "down"
		}
		fmt.Fprintf(b, "%s %s\n", br.name, status)
		for _, g := range w.groups {
			if g.coord != int32(br.node) {
				continue
			}
			if g.cs != nil && g.cs.active {
				cg := g.cs.group
				if br.cg != nil {
					cg = br.cg.Group(g.id)
				}
				if cg == nil {
					fmt.Fprintf(b, "  group %s: consumer, no member yet\n", g.id)
					continue
				}
				fmt.Fprintf(b, "  group %s: consumer %s epoch=%d\n", g.id, cg.State(), cg.Epoch)
				for _, m := range cg.Members() {
					kind := ""
					if m.Classic() {
						kind = " classic"
					}
					fmt.Fprintf(b, "    %s%s %s epoch=%d assigned=(%s)", m.ID, kind, m.State(), m.Epoch(), partitionList(m.Assigned()))
					if r := m.Revoking(); len(r) > 0 {
						fmt.Fprintf(b, " revoking=(%s)", partitionList(r))
					}
					b.WriteString("\n")
				}
				continue
			}
			st, gen, ok := br.b.GroupState(g.id)
			if !ok {
				fmt.Fprintf(b, "  group %s: classic, no member yet\n", g.id)
				continue
			}
			fmt.Fprintf(b, "  group %s: classic %s gen=%d leader=%s members=(%s)\n", g.id, st, gen, br.b.Leader(g.id), strings.Join(br.b.Members(g.id), " "))
		}
	}
	for _, g := range w.groups {
		settled := "settled"
		if !g.m.stableAtEnd() {
			settled = "not settled"
		}
		fmt.Fprintf(b, "group %s: %s, coordinator broker-%d\n", g.id, settled, g.coord)
		for _, si := range g.slots {
			s := w.slots[si]
			switch {
			case !s.alive && s.inc == 0:
				fmt.Fprintf(b, "  %s not started\n", s.name)
				continue
			case !s.alive:
				fmt.Fprintf(b, "  %s stopped\n", s.name)
				continue
			}
			paused := ""
			if s.paused {
				paused = " paused"
			}
			if p := s.cp(); p != nil {
				m := p.Member()
				fmt.Fprintf(b, "  %s%s consumer %s epoch=%d id=%s owns=(%s)\n", s.name, paused, m.State(), m.Epoch(), m.ID(), partitionList(m.Owned()))
				continue
			}
			m := s.m.(*client.Member)
			gen, id := m.Generation()
			fmt.Fprintf(b, "  %s%s classic %s gen=%d id=%s owns=(%s)\n", s.name, paused, m.State(), gen, id, partitionList(m.Owned()))
		}
	}
}

// partitionList prints partitions as "t-0 t-1".
func partitionList(tps []protocol.TopicPartition) string {
	var parts []string
	for _, tp := range tps {
		parts = append(parts, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
	}
	return strings.Join(parts, " ")
}

// writeSummary prints the figures of a run's summary a script checks.
func writeSummary(b *strings.Builder, s *Summary) {
	for _, g := range s.Groups {
		var trig []string
		for _, r := range g.Rebalances {
			trig = append(trig, r.Trigger)
		}
		fmt.Fprintf(b, "group %s: final generation %d, stable at end %t\n", g.ID, g.FinalGeneration, g.StableAtEnd)
		fmt.Fprintf(b, "  rebalances: %d (%s)\n", g.RebalanceCount, strings.Join(trig, " "))
		fmt.Fprintf(b, "  evictions: %d (false %d), fences: %d, leaves: %d\n", g.Evictions, g.FalseEvictions, g.Fences, g.Leaves)
		fmt.Fprintf(b, "  unowned partition-seconds: %g, double-owned: %g\n", g.UnownedPartitionSeconds, g.DoubleOwnedPartitionSeconds)
		if len(g.FatalErrors) > 0 {
			fmt.Fprintf(b, "  fatal: %s\n", strings.Join(g.FatalErrors, "; "))
		}
	}
	for _, v := range s.InvariantViolations {
		fmt.Fprintf(b, "violation %s at %dms: %s\n", v.Checker, v.AtMs, v.Message)
	}
}

// eventMatcher matches trace events against a command's node, peer, kind,
// api, state, reason and err arguments (all given must match), ignoring
// the keys in skip.
func eventMatcher(t *testing.T, c *datadriven.Case, skip ...string) func(TraceEvent) bool {
	type cond struct{ key, val string }
	var conds []cond
	for _, a := range c.Args {
		if slices.Contains(skip, a.Key) {
			continue
		}
		switch a.Key {
		case "node", "to", "peer", "from", "kind", "api", "state", "reason", "err", "detail":
			require.Len(t, a.Vals, 1, "%s: %s=VALUE", c.Pos, a.Key)
			conds = append(conds, cond{a.Key, a.Vals[0]})
		default:
			t.Fatalf("%s: unknown argument %q", c.Pos, a.Key)
		}
	}
	return func(ev TraceEvent) bool {
		for _, k := range conds {
			if traceField(&ev, k.key) != k.val {
				return false
			}
		}
		return true
	}
}

// traceField is what a trace event says under a script's argument key
// (node or to, peer or from, kind, api, state, reason, err, detail, and dir:
// request or response), as the interaction and bug scripts filter on it;
// "" for any other key.
func traceField(ev *TraceEvent, key string) string {
	switch key {
	case "node", "to":
		return ev.Node
	case "peer", "from":
		return ev.Peer
	case "kind":
		return string(ev.Kind)
	case "api":
		return ev.API.String()
	case "state":
		return ev.State
	case "reason":
		return ev.Reason
	case "err":
		return ev.Err.String()
	case "detail":
		return ev.Detail
	case "dir":
		if ev.Req {
			return "request"
		}
		return "response"
	}
	return ""
}

// positional is a command's one positional argument ("tick 3s").
func positional(t *testing.T, c *datadriven.Case) string {
	require.Len(t, c.Args, 1, "%s: %s takes one argument", c.Pos, c.Cmd)
	require.Empty(t, c.Args[0].Vals, "%s", c.Pos)
	return c.Args[0].Key
}

func durationArg(t *testing.T, c *datadriven.Case, v string) time.Duration {
	d, err := time.ParseDuration(v)
	require.NoError(t, err, c.Pos)
	return d
}

func atoiArg(t *testing.T, c *datadriven.Case, v string) int {
	n, err := strconv.Atoi(v)
	require.NoError(t, err, c.Pos)
	return n
}

// interactionScenario reads a script's `scenario` command: the scenario
// (inline YAML, or a built-in or file named by name=) and the seed (seed=,
// default 1).
func interactionScenario(t *testing.T, c *datadriven.Case) (*scenario.Scenario, uint64) {
	seed := uint64(1)
	if v, ok := c.Arg("seed"); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, c.Pos)
		seed = n
	}
	if name, ok := c.Arg("name"); ok {
		require.Empty(t, strings.TrimSpace(c.Input), "%s: name= or an inline scenario, not both", c.Pos)
		return load(t, name), seed
	}
	return simtest.Parse(t, c.Input), seed
}
