package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// checker sees every trace event and may report an invariant violation
// (TigerBeetle's state checker, STYLE.md §16).
type checker interface {
	name() string
	// check inspects one event; a non-empty result is a violation.
	check(w *world, e *TraceEvent) string
	// final runs once at the end of the run.
	final(w *world) string
}

func newCheckers(w *world) []checker {
	cs := []checker{
		&singleOwnerChecker{owner: map[ownerKey]string{}},
		&generationChecker{coord: map[string]int32{}, client: map[string]clientGen{}},
		&livenessChecker{},
		modelAssertChecker{},
	}
	if hasConsumerGroups(w.sc) {
		cs = append(cs, &exclusiveOwnerChecker{})
	}
	return cs
}

// modelAssertChecker: a model's own invariant check failed (EvAssertFailed,
// model/client/assert.go). The model stopped the member; the run is a
// violation like any other, with its seed.
type modelAssertChecker struct{}

func (modelAssertChecker) name() string { return "model-assertion" }

func (modelAssertChecker) check(_ *world, e *TraceEvent) string {
	if e.Kind != protocol.EvAssertFailed {
		return ""
	}
	return e.Node + ": " + e.Detail
}

func (modelAssertChecker) final(*world) string { return "" }

// singleOwnerChecker: at most one owner per partition per generation, as
// assigned (the assignments members apply in one generation are disjoint).
type singleOwnerChecker struct {
	owner map[ownerKey]string
}

type ownerKey struct {
	group string
	gen   int32
	tp    protocol.TopicPartition
}

func (c *singleOwnerChecker) name() string { return "single-owner-per-generation" }

func (c *singleOwnerChecker) check(w *world, e *TraceEvent) string {
	if e.Kind != protocol.EvAssigned {
		return ""
	}
	if e.Gen < 0 {
		// NO_GENERATION: the heartbeat thread's poll timeout
		// (max.poll.interval.ms) left the group and reset the generation
		// (AbstractCoordinator.maybeLeaveGroup → resetGenerationOnLeaveGroup)
		// while onPartitionsAssigned ran, so the member applies an
		// assignment of its former generation outside any generation, as a
		// Java consumer does until its next poll gives the partitions up as
		// lost (ConsumerCoordinator.onJoinPrepare, "Giving away all assigned
		// partitions as lost since generation/memberID has been reset").
		// Two such members in different generations share -1 without ever
		// being assigned a partition in one generation; their overlap in
		// time is measured as double-owned partition-seconds.
		return ""
	}
	for _, tp := range e.Partitions {
		k := ownerKey{e.Group, e.Gen, tp}
		if prev, ok := c.owner[k]; ok && prev != e.Node {
			return fmt.Sprintf("%s-%d assigned to %s and %s in generation %d", tp.Topic, tp.Partition, prev, e.Node, e.Gen)
		}
		c.owner[k] = e.Node
	}
	return ""
}

func (c *singleOwnerChecker) final(*world) string { return "" }

// generationChecker: generations never go back, at the coordinator (except
// when a failover reloads the group at its last persisted generation, as
// Kafka does) or at a client process (except by resetGeneration).
type generationChecker struct {
	coord  map[string]int32
	client map[string]clientGen
}

type clientGen struct {
	gen   int32
	group string
}

func (c *generationChecker) name() string { return "monotonic-generations" }

func (c *generationChecker) check(w *world, e *TraceEvent) string {
	switch e.Kind {
	case protocol.EvGenerationComplete:
		if prev, ok := c.coord[e.Group]; ok && e.Gen <= prev {
			return fmt.Sprintf("coordinator %s: generation %d after %d", e.Node, e.Gen, prev)
		}
		c.coord[e.Group] = e.Gen
	case EvBrokerRole:
		// The new coordinator reloads the last persisted generation, which
		// may be older than one a member already joined (a join completed
		// but never synced): Kafka then answers that member's rejoin with
		// the reloaded generation (kafka-classic-protocol.md §14). Both
		// sides start over from the reload.
		delete(c.coord, e.Group)
		for node, cg := range c.client {
			if cg.group == e.Group {
				delete(c.client, node)
			}
		}
	case protocol.EvJoined:
		if prev, ok := c.client[e.Node]; ok && e.Gen < prev.gen {
			return fmt.Sprintf("client %s: joined generation %d after %d", e.Node, e.Gen, prev.gen)
		}
		c.client[e.Node] = clientGen{gen: e.Gen, group: e.Group}
	case EvProcess, protocol.EvGenerationReset:
		delete(c.client, e.Node) // a new process, or a reset, starts over
	}
	return ""
}

func (c *generationChecker) final(*world) string { return "" }

// livenessChecker: once faults stop, within session timeout + rebalance
// timeout (+ slack for round trips and poll loops), every group is Stable
// with every live member assigned. Checked at the end of the run when the
// run lasted that long after the last fault.
type livenessChecker struct{}

func (c *livenessChecker) name() string { return "liveness" }

func (c *livenessChecker) check(*world, *TraceEvent) string { return "" }

func (c *livenessChecker) final(w *world) string {
	if w.sc.Network.Loss > 0 {
		// Loss set on the network (not in a window) never stops: the run
		// has no quiet phase in which liveness could be expected.
		return ""
	}
	quiet := lastFaultEnd(w.sc, w.faults)
	for _, g := range w.groups {
		// With cohorts, the longest bound of any cohort, and no liveness
		// expected when any cohort's workload stalls.
		var bound time.Duration
		stalls := false
		for _, c := range g.cohorts {
			session := w.sc.SessionTimeout(c.sc) // the broker's under KIP-848
			b := session + c.sc.Client.MaxPollInterval + 30*time.Second
			if c.sc.Client.MaxPollInterval == 0 {
				b += c.sc.Client.SessionTimeout
			}
			bound = max(bound, b)
			stalls = stalls || workloadStalls(c.sc)
		}
		if w.q.Now() < sim.Instant(quiet+bound) || stalls {
			continue
		}
		live := 0
		for _, si := range g.slots {
			if w.slots[si].alive {
				live++
			}
		}
		if live == 0 || len(g.m.fatal) > 0 {
			continue
		}
		if g.m.coordState != "Stable" || g.m.open || g.m.settled < g.m.live {
			return fmt.Sprintf("group %s not Stable with every live member assigned %v after the last fault (state %s, %d of %d members settled)",
				g.id, bound, g.m.coordState, g.m.settled, g.m.live)
		}
	}
	return ""
}

// workloadStalls reports whether the group's own workload keeps it from
// ever being stable, so liveness is not expected: processing longer than the
// session timeout without a heartbeat thread (kafka-0.10), or longer than
// max.poll.interval.ms. Distributions are judged by their upper tail.
func workloadStalls(g *scenario.Group) bool {
	p := distUpper(g.Workload.PollInterval) + distUpper(g.Workload.CallbackTime)*2 + distUpper(g.Workload.AssignTime)
	if g.Client.MaxPollInterval == 0 { // kafka-0.10: heartbeats only from poll()
		return p >= g.Client.SessionTimeout-g.Client.HeartbeatInterval
	}
	return p >= g.Client.MaxPollInterval
}

func distUpper(d scenario.Dist) time.Duration {
	switch d.Kind {
	case scenario.DistUniform:
		return d.Max
	case scenario.DistExponential:
		return d.Min + 5*(d.Mean-d.Min)
	case scenario.DistLognormal:
		return d.P99
	}
	return d.Value
}

// lastFaultEnd is when the last fault (or its window) ends, over the run's
// faults (the file's and the swarm's).
func lastFaultEnd(sc *scenario.Scenario, faults []scenario.Fault) time.Duration {
	var end time.Duration
	for _, f := range faults {
		e := f.At + f.For
		if f.Kind == scenario.FaultRollingRestart {
			if n := sc.GroupMembers(f.Target); n > 0 { // over all the group's cohorts
				e = f.At + time.Duration(n)*f.Interval + f.Downtime
			}
		}
		if f.Kind == scenario.FaultAddPartitions {
			// New partitions are seen at the clients' next metadata
			// refresh: up to metadata.max.age.ms later.
			for _, g := range sc.Groups {
				if slices.Contains(g.Subscribe, f.Target) {
					e = max(e, f.At+g.Client.MetadataMaxAge)
				}
			}
		}
		if e > end {
			end = e
		}
	}
	return end
}

// violationEvent is the violating event as one trace line (docs/TRACE.md),
// without the newline.
func violationEvent(e *TraceEvent) string {
	b := appendJSON(nil, e)
	return string(b[:len(b)-1])
}
