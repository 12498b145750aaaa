package harness

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// checker sees every trace event and may report an invariant violation
// (TigerBeetle's state checker, STYLE.md §16). It reads the world through
// a runView, never the world itself: a checker judges the run, it cannot
// change it.
type checker interface {
	name() string
	// check inspects one event; a non-empty result is a violation.
	check(v runView, e *TraceEvent) string
	// final runs once at the end of the run.
	final(v runView) string
}

// runView is what the invariant checkers may read of the running world
// (worldView, view.go): the scenario and the run's faults, the clock, each
// group's partitions and health, and who holds a partition.
type runView interface {
	now() sim.Instant
	scenario() *scenario.Scenario
	// faults is the run's whole fault timeline (the file's and the
	// swarm's).
	faults() []scenario.Fault
	// partitions lists group's subscribed partitions, each topic's 0..n-1
	// in order (nil for an unknown group).
	partitions(group string) []protocol.TopicPartition
	// health is every group's state now, in the scenario's order.
	health() []groupHealth
	// sharedOwnership reports whether member slot i runs in a group under
	// the consumer protocol in which some partition has more than one
	// owner now (the cheap test before holders).
	sharedOwnership(i int32) bool
	// holders lists the live members of slot i's group that hold tp and
	// that the group's coordinator believes hold it (assigned or pending
	// revocation).
	holders(i int32, tp protocol.TopicPartition) []string
	// slotName is member slot i's name. Checkers find an event's member by
	// its slot (TraceEvent.Member), never by its name, and keep
	// per-member state in arrays by slot instead of maps by name: 8 bytes
	// a member, not a map entry of 44 to 70 (a 10,000-member run's
	// checkers stay within a few hundred kilobytes).
	slotName(i int32) string
	// subscription is the topics member slot i subscribes to (its cohort's
	// `subscribe:`).
	subscription(i int32) []string
}

// groupHealth is one group as the liveness checker sees it.
type groupHealth struct {
	id      string
	cohorts []*scenario.Group // the group's entries, in file order
	// procs is the live processes of the group's slots; fatal whether a
	// member stopped on a fatal error.
	procs int
	fatal bool
	// state is the coordinator's group state; open whether a settle
	// episode is open; settled of live members are STABLE holding their
	// assignment (metrics.go).
	state         protocol.GroupState
	open          bool
	settled, live int
}

// CheckerNames lists every name an invariant violation can carry
// (Violation.Checker): the checkers of newCheckers and the run's own
// limits ("spin", "progress"). A finding of RunOracles is named by one of
// these or by an oracle (scenario.OracleNames).
var CheckerNames = []string{"single-owner-per-generation", "monotonic-generations", "liveness", "model-assertion", "exclusive-ownership", "spin", "progress"}

func newCheckers(sc *scenario.Scenario) []checker {
	cs := []checker{
		newSingleOwnerChecker(),
		&generationChecker{coord: map[string]int32{}, client: map[string]clientGen{}},
		&livenessChecker{},
		modelAssertChecker{},
		subscribedOwnerChecker{},
	}
	if hasConsumerGroups(sc) {
		cs = append(cs, &exclusiveOwnerChecker{})
	}
	return cs
}

// modelAssertChecker: a model's own invariant check failed (EvAssertFailed,
// model/classic/client/assert.go). The model stopped the member; the run is a
// violation like any other, with its seed.
type modelAssertChecker struct{}

func (modelAssertChecker) name() string { return "model-assertion" }

func (modelAssertChecker) check(_ runView, e *TraceEvent) string {
	if e.Kind != protocol.EvAssertFailed {
		return ""
	}
	return e.Node + ": " + e.Detail
}

func (modelAssertChecker) final(runView) string { return "" }

// subscribedOwnerChecker: a member only ever owns partitions of the topics
// it subscribes to, under either protocol. Kafka's assignors give a member
// partitions of its own subscription only: the classic ones per topic over
// its subscribers (AbstractPartitionAssignor.assign's consumersPerTopic),
// the consumer protocol's through the heterogeneous paths
// (UniformHeterogeneousAssignmentBuilder, RangeAssignor.
// assignHeterogeneousGroup, v8.3.0). A subscription never changes within a
// run (a cohort's `subscribe:` is fixed), so no revocation of an
// unsubscribed topic is ever pending. The event is the member's
// onPartitionsAssigned: EvAssigned with everything it owns.
type subscribedOwnerChecker struct{}

func (subscribedOwnerChecker) name() string { return "owns-only-subscribed-topics" }

func (subscribedOwnerChecker) check(v runView, e *TraceEvent) string {
	if e.Kind != protocol.EvAssigned || len(e.Partitions) == 0 {
		return ""
	}
	i, ok := e.Member()
	if !ok {
		return ""
	}
	topics := v.subscription(i)
	for _, tp := range e.Partitions {
		if !slices.Contains(topics, tp.Topic) {
			return fmt.Sprintf("%s owns %s-%d in generation %d but subscribes to %v", e.Node, tp.Topic, tp.Partition, e.Gen, topics)
		}
	}
	return ""
}

func (subscribedOwnerChecker) final(runView) string { return "" }

// singleOwnerChecker: at most one owner per partition per generation, as
// assigned (the assignments members apply in one generation are disjoint).
//
// Layout (so that the checker's memory stays small beside the run's): every
// generation of a group keeps a dense
// array of owners indexed by the group's partition (4 bytes a partition, not
// a map entry of about 70), owners named by an interned id; a generation's
// array is kept for the whole run, since a slow member may apply an old
// generation's assignment late. A partition outside the group's topics (none
// in practice) goes to a map. An owner's id is its member slot + 1
// (runView.memberSlot), or, for a node that is not a member slot (none in
// practice), -(its index in names + 1).
type singleOwnerChecker struct {
	groups map[string]*ownerGroup
	ids    map[string]int32 // node name → id, for nodes that are not member slots
	names  []string         // -id-1 → node name
	other  map[ownerKey]string
}

// ownerGroup is one group's owners: partition p of topic t is index
// topics[t].base+p of a generation's array.
type ownerGroup struct {
	topics map[string]topicSpan
	size   int32
	gens   map[int32][]int32 // generation → owner id+1 per partition (0: none)
}

// topicSpan is where a topic's partitions 0..n-1 sit in a generation's array.
type topicSpan struct{ base, n int32 }

func newSingleOwnerChecker() *singleOwnerChecker {
	return &singleOwnerChecker{groups: map[string]*ownerGroup{}, ids: map[string]int32{}, other: map[ownerKey]string{}}
}

type ownerKey struct {
	group string
	gen   int32
	tp    protocol.TopicPartition
}

func (c *singleOwnerChecker) name() string { return "single-owner-per-generation" }

func (c *singleOwnerChecker) check(v runView, e *TraceEvent) string {
	if e.Kind == tracing.EvGroupType && e.Conversion == reasonGroupRecreated {
		// A new incarnation of the group: its generations start again
		// (Kafka's behaviour, reasonGroupRecreated), and an assignment of
		// the deleted group's generation N says nothing about the new
		// group's generation N.
		if g := c.groups[e.Group]; g != nil {
			g.gens = map[int32][]int32{}
		}
		for k := range c.other {
			if k.group == e.Group {
				delete(c.other, k)
			}
		}
		return ""
	}
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
	if len(e.Partitions) == 0 {
		return ""
	}
	g := c.group(v, e.Group)
	id := c.ownerID(e)
	owners := g.gens[e.Gen]
	if owners == nil {
		owners = make([]int32, g.size)
		g.gens[e.Gen] = owners
	}
	for _, tp := range e.Partitions {
		if t, ok := g.topics[tp.Topic]; ok && tp.Partition >= 0 && tp.Partition < t.n {
			i := t.base + tp.Partition
			if prev := owners[i]; prev != 0 && prev != id {
				return fmt.Sprintf("%s-%d assigned to %s and %s in generation %d", tp.Topic, tp.Partition, c.ownerName(v, prev), e.Node, e.Gen)
			}
			owners[i] = id
			continue
		}
		k := ownerKey{e.Group, e.Gen, tp}
		if prev, ok := c.other[k]; ok && prev != e.Node {
			return fmt.Sprintf("%s-%d assigned to %s and %s in generation %d", tp.Topic, tp.Partition, prev, e.Node, e.Gen)
		}
		c.other[k] = e.Node
	}
	return ""
}

// ownerID is the id of e's owner (non-zero).
func (c *singleOwnerChecker) ownerID(e *TraceEvent) int32 {
	if i, ok := e.Member(); ok {
		return i + 1
	}
	node := e.Node
	id := c.ids[node]
	if id == 0 {
		c.names = append(c.names, node)
		id = -int32(len(c.names))
		c.ids[node] = id
	}
	return id
}

// ownerName is the node name of owner id.
func (c *singleOwnerChecker) ownerName(v runView, id int32) string {
	if id > 0 {
		return v.slotName(id - 1)
	}
	return c.names[-id-1]
}

// group returns the owners of group id, indexing its partitions on first use.
func (c *singleOwnerChecker) group(v runView, id string) *ownerGroup {
	if g := c.groups[id]; g != nil {
		return g
	}
	g := &ownerGroup{topics: map[string]topicSpan{}, gens: map[int32][]int32{}}
	// Each subscribed topic's partitions 0..n-1, in order.
	for _, tp := range v.partitions(id) {
		t, ok := g.topics[tp.Topic]
		if !ok {
			t.base = g.size
		}
		if tp.Partition == t.n {
			t.n++
		}
		g.topics[tp.Topic] = t
		g.size++
	}
	c.groups[id] = g
	return g
}

func (c *singleOwnerChecker) final(runView) string { return "" }

// generationChecker: generations never go back, at the coordinator (except
// when a failover reloads the group at its last persisted generation, as
// Kafka does) or at a client process (except by resetGeneration).
type generationChecker struct {
	coord map[string]int32
	// slots is each member slot's process's last joined generation, by
	// slot (TraceEvent.Member: clientGenSize a member, not a map entry of
	// about 44); client the same for any other node (none in practice).
	slots  []clientGen
	client map[string]clientGen
	// groups interns group ids for clientGen.group (a map entry of 24
	// bytes instead of 40: one per member process).
	groups map[string]int32
}

type clientGen struct {
	gen   int32
	group int32 // generationChecker.groupID (from 1); 0: no entry
}

// clientGenSize is clientGen's size: one per member slot.
const clientGenSize = 8

var _ [clientGenSize - unsafe.Sizeof(clientGen{})]struct{} // fails to compile if clientGen grows

// joined is the last joined generation of e's node, if it has one.
func (c *generationChecker) joined(e *TraceEvent) (clientGen, bool) {
	node := e.Node
	if i, ok := e.Member(); ok {
		if int(i) < len(c.slots) && c.slots[i].group != 0 {
			return c.slots[i], true
		}
		return clientGen{}, false
	}
	cg, ok := c.client[node]
	return cg, ok
}

// setJoined records the joined generation of e's node; forget drops it.
func (c *generationChecker) setJoined(e *TraceEvent, cg clientGen) {
	node := e.Node
	if i, ok := e.Member(); ok {
		if int(i) >= len(c.slots) {
			c.slots = append(c.slots, make([]clientGen, int(i)+1-len(c.slots))...)
		}
		c.slots[i] = cg
		return
	}
	c.client[node] = cg
}

func (c *generationChecker) forget(e *TraceEvent) {
	node := e.Node
	if i, ok := e.Member(); ok {
		if int(i) < len(c.slots) {
			c.slots[i] = clientGen{}
		}
		return
	}
	delete(c.client, node)
}

// groupID is group's interned id, from 1.
func (c *generationChecker) groupID(group string) int32 {
	id, ok := c.groups[group]
	if !ok {
		if c.groups == nil {
			c.groups = map[string]int32{}
		}
		id = int32(len(c.groups)) + 1
		c.groups[group] = id
	}
	return id
}

func (c *generationChecker) name() string { return "monotonic-generations" }

func (c *generationChecker) check(v runView, e *TraceEvent) string {
	switch e.Kind {
	case protocol.EvGenerationComplete:
		if prev, ok := c.coord[e.Group]; ok && e.Gen <= prev {
			return fmt.Sprintf("coordinator %s: generation %d after %d", e.Node, e.Gen, prev)
		}
		c.coord[e.Group] = e.Gen
	case tracing.EvBrokerRole, tracing.EvGroupType:
		// The new coordinator reloads the last persisted generation, which
		// may be older than one a member already joined (a join completed
		// but never synced): Kafka then answers that member's rejoin with
		// the reloaded generation (kafka-classic-protocol.md §14). Both
		// sides start over from the reload. So they do when an empty
		// classic group is deleted and a consumer group takes its id at
		// epoch 1 (reasonGroupRecreated); a conversion keeps the
		// generation and changes nothing here.
		if e.Kind == tracing.EvGroupType && e.Conversion != reasonGroupRecreated {
			return ""
		}
		delete(c.coord, e.Group)
		gid := c.groupID(e.Group)
		for node, cg := range c.client {
			if cg.group == gid {
				delete(c.client, node)
			}
		}
		for i := range c.slots {
			if c.slots[i].group == gid {
				c.slots[i] = clientGen{}
			}
		}
	case protocol.EvJoined:
		if prev, ok := c.joined(e); ok && e.Gen < prev.gen {
			return fmt.Sprintf("client %s: joined generation %d after %d", e.Node, e.Gen, prev.gen)
		}
		c.setJoined(e, clientGen{gen: e.Gen, group: c.groupID(e.Group)})
	case tracing.EvProcess, protocol.EvGenerationReset:
		c.forget(e) // a new process, or a reset, starts over
	}
	return ""
}

func (c *generationChecker) final(runView) string { return "" }

// livenessChecker: once faults stop, within session timeout + rebalance
// timeout (+ slack for round trips and poll loops), every group is Stable
// with every live member assigned. Checked at the end of the run when the
// run lasted that long after the last fault.
type livenessChecker struct{}

func (c *livenessChecker) name() string { return "liveness" }

func (c *livenessChecker) check(runView, *TraceEvent) string { return "" }

func (c *livenessChecker) final(v runView) string {
	sc := v.scenario()
	if sc.Network.Loss > 0 {
		// Loss set on the network (not in a window) never stops: the run
		// has no quiet phase in which liveness could be expected.
		return ""
	}
	quiet := lastFaultEnd(sc, v.faults())
	for _, g := range v.health() {
		// With cohorts, the longest bound of any cohort, and no liveness
		// expected when any cohort's workload stalls.
		var bound time.Duration
		stalls := false
		for _, c := range g.cohorts {
			session := sc.SessionTimeout(c) // the broker's under KIP-848
			b := session + c.Client.MaxPollInterval + 30*time.Second
			if c.Client.MaxPollInterval == 0 {
				b += c.Client.SessionTimeout
			}
			bound = max(bound, b)
			stalls = stalls || workloadStalls(c)
		}
		if v.now() < sim.Instant(quiet+bound) || stalls {
			continue
		}
		if g.procs == 0 || g.fatal {
			continue
		}
		if g.state != protocol.GroupStable || g.open || g.settled < g.live {
			return fmt.Sprintf("group %s not Stable with every live member assigned %v after the last fault (state %s, %d of %d members settled)",
				g.id, bound, g.state, g.settled, g.live)
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
	b := tracing.AppendJSON(nil, e)
	return string(b[:len(b)-1])
}
