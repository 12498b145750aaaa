package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// Three oracles for symptoms that end by themselves, so the end-state
// oracles cannot see them: each judges one event against what the group's
// coordinator holds at that instant (docs/OBSERVABILITY.md, "Oracles").
//
//   - handover-before-revoke (KAFKA-14639): the cooperative protocol's
//     promise (KIP-429) is that a partition moves only after its owner
//     revoked it. It is broken when a partition is assigned to a process
//     while another live process still owns it and that process is still a
//     member of the group at the coordinator. An owner the coordinator
//     already removed (evicted, fenced, expired) is not a violation: that
//     is the zombie case every Kafka version has, and why the member's
//     next request fails. Two more cases are the protocol's, not the
//     assignor's, and do not count: the old owner's claim never reached
//     the leader (its last JoinGroup that arrived before the generation
//     completed did not list the partition: a static member kept in a
//     generation it did not rejoin, KAFKA-8220, claims what it owned when
//     it last joined), and the assignment is of an older generation than
//     the coordinator's (a SyncGroup answer applied after a pause).
//   - over-revocation (KAFKA-13891): a cooperative member gives partitions
//     up as lost (onPartitionsLost) although nothing took them from it: it
//     is still a member at the coordinator, the coordinator is still at the
//     generation the member joined, and the member did not leave (a
//     poll-timeout or close leave gives everything up by design). Losing
//     partitions on ILLEGAL_GENERATION (the group moved on without the
//     member), UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID (it is no member) is
//     justified, so it never counts.
//   - false-not-coordinator (apache/kafka PR #4788): coordinator-dead marks
//     caused by a NOT_COORDINATOR answer from the broker the member gave up
//     on (a late answer of an earlier coordinator is honest; the client
//     marks whichever coordinator it has now) that are false by docs/DESIGN.md's
//     definition (the broker the member used was alive and still the
//     coordinator at that instant): the broker answered, so the network
//     worked, and the answer was wrong. One definition with the summary's
//     "false" dead marks (Observation.False, metrics.go).

// promiseState is the three oracles' state.
type promiseState struct {
	cooperative map[string]bool  // group id → every cohort's assignors are cooperative
	gen         map[string]int32 // group id → the coordinator's last completed generation
	joined      map[string]int32 // process → the generation of its last successful JoinGroup
	left        map[string]bool  // process → left (EvLeave) since that join
	// claims: process → the ownedPartitions of its last JoinGroup that
	// reached the coordinator (what the assignor is told, KIP-429); sent:
	// the ownedPartitions of each JoinGroup in flight, by correlation id.
	claims map[string][]protocol.TopicPartition
	sent   map[sentJoin][]protocol.TopicPartition
	// genClaims: claims when the coordinator's last generation completed
	// (the subscriptions the leader assigned that generation from).
	genClaims map[string]map[string][]protocol.TopicPartition // group → process → claims
	// notCoordFrom: process → the broker node of the last NOT_COORDINATOR
	// answer delivered to it; self: the dead marks (process, instant)
	// whose NOT_COORDINATOR came from the very broker the client gave up
	// on (not a stale answer of an earlier coordinator).
	notCoordFrom map[string]string
	self         map[deadMark]bool
	pendingLost  *Finding // an over-revocation judged once its instant is over
	pendingAt    time.Duration
	open         []handover
	handover     []Finding
	overRevoked  []Finding
	fired        map[string]bool // oracle + group: one finding per group and oracle
}

type deadMark struct {
	proc string
	at   time.Duration
}

type sentJoin struct {
	proc string
	corr uint64
}

// handover is one double ownership the handover-before-revoke oracle is
// timing: part assigned to to at since while from still owned it.
type handover struct {
	group, from, to string
	part            protocol.TopicPartition
	since           time.Duration
}

func newPromiseState(sc *scenario.Scenario) *promiseState {
	p := &promiseState{cooperative: map[string]bool{}, gen: map[string]int32{}, joined: map[string]int32{},
		left: map[string]bool{}, fired: map[string]bool{}, claims: map[string][]protocol.TopicPartition{},
		sent: map[sentJoin][]protocol.TopicPartition{}, genClaims: map[string]map[string][]protocol.TopicPartition{},
		notCoordFrom: map[string]string{}, self: map[deadMark]bool{}}
	for _, id := range sc.GroupIDs() {
		coop := true
		for _, c := range sc.Cohorts(id) {
			// ConsumerCoordinator picks COOPERATIVE only when every
			// configured assignor supports it (cooperative-sticky alone).
			if c.Consumer() || len(c.Client.Assignors) == 0 ||
				slices.ContainsFunc(c.Client.Assignors, func(a string) bool { return a != "cooperative-sticky" }) {
				coop = false
			}
		}
		p.cooperative[id] = coop
	}
	return p
}

// member reports whether process name has a member id in group g at its
// current coordinator (the ids that broker's events added and did not
// remove; after a coordinator move, only those seen since).
func (o *oracleSet) member(g *oracleGroup, name string) bool {
	for id := range g.idsAt[g.coord] {
		if o.owner[id] == name {
			return true
		}
	}
	return false
}

// observePromise runs before observe updates the ownership view, so an
// assignment is judged against the owners before it.
func (o *oracleSet) observePromise(e *TraceEvent, at time.Duration) {
	p := o.promise
	if f := p.pendingLost; f != nil {
		switch {
		case e.Node == f.Node && at == p.pendingAt &&
			(e.Kind == protocol.EvLeave || e.Kind == tracing.EvProcess && e.Process != protocol.ProcessPaused && e.Process != protocol.ProcessResumed):
			// The lost partitions were given up by close() (onLeavePrepare),
			// which emits them before its leave: by design.
			p.pendingLost = nil
		case at > p.pendingAt:
			o.commitLost()
		}
	}
	switch e.Kind {
	case tracing.EvSend:
		if e.Req && e.API == protocol.APIJoinGroup {
			if q := o.procs[e.Node]; q != nil {
				p.sent[sentJoin{e.Node, e.Corr}] = slices.Clone(q.owned)
			}
		}
	case protocol.EvCoordinatorDead:
		if e.Dead == protocol.DeadErrorResponse && e.DeadErr == protocol.NotCoordinator &&
			p.notCoordFrom[e.Node] == scenario.BrokerPrefix+e.Peer {
			p.self[deadMark{e.Node, at}] = true
		}
	case tracing.EvDeliver:
		if !e.Req && e.Err == protocol.NotCoordinator {
			p.notCoordFrom[e.Node] = e.Peer
		}
		if k := (sentJoin{e.Peer, e.Corr}); e.Req && e.API == protocol.APIJoinGroup {
			if c, ok := p.sent[k]; ok {
				p.claims[e.Peer] = c
				delete(p.sent, k)
			}
		}
	case protocol.EvGenerationComplete:
		p.gen[e.Group] = e.Gen
		snap := map[string][]protocol.TopicPartition{}
		for k, v := range p.claims {
			if q := o.procs[k]; q != nil && q.group == e.Group {
				snap[k] = v
			}
		}
		p.genClaims[e.Group] = snap
	case protocol.EvJoined:
		p.joined[e.Node] = e.Gen
		p.left[e.Node] = false
	case protocol.EvLeave:
		p.left[e.Node] = true
	case tracing.EvProcess:
		if e.Process == protocol.ProcessStarted {
			delete(p.claims, e.Node)
			for k := range p.sent {
				if k.proc == e.Node {
					delete(p.sent, k)
				}
			}
		}
		if e.Process.Ended() {
			o.closeHandovers(at, func(h handover) bool { return h.from == e.Node || h.to == e.Node })
		}
	case protocol.EvAssigned:
		q := o.procs[e.Node]
		g := o.groups[e.Group]
		if q == nil || g == nil || !p.cooperative[e.Group] || !o.cfg.Enabled(scenario.OracleHandoverBeforeRevoke) {
			return
		}
		if e.Gen != p.gen[e.Group] {
			// A stale assignment (its SyncGroup answered before a pause,
			// applied after it): the zombie case, not the assignor's.
			return
		}
		for _, tp := range e.Partitions {
			if slices.Contains(q.owned, tp) {
				continue // kept, not handed over
			}
			for _, name := range o.names {
				r := o.procs[name]
				if r == q || r.group != e.Group || !r.alive || !slices.Contains(r.owned, tp) || !o.member(g, name) ||
					!slices.Contains(p.genClaims[e.Group][name], tp) {
					continue
				}
				p.open = append(p.open, handover{group: e.Group, from: name, to: e.Node, part: tp, since: at})
			}
		}
	case protocol.EvRevoked:
		o.closeHandovers(at, func(h handover) bool {
			return (h.from == e.Node || h.to == e.Node) && slices.Contains(e.Partitions, h.part)
		})
		g := o.groups[e.Group]
		if e.Revocation != protocol.Lost || g == nil || !p.cooperative[e.Group] ||
			!o.cfg.Enabled(scenario.OracleOverRevocation) || p.fired[scenario.OracleOverRevocation+e.Group] {
			return
		}
		bound := max(o.cfg.OverRevocation, 1)
		joined, ok := p.joined[e.Node]
		if !ok || p.left[e.Node] || joined != p.gen[e.Group] || !o.member(g, e.Node) || len(e.Partitions) < bound {
			return
		}
		if p.pendingLost != nil {
			return
		}
		p.pendingAt = at
		p.pendingLost = &Finding{Oracle: scenario.OracleOverRevocation, Group: e.Group, Node: e.Node,
			AtMs: int64(at / time.Millisecond),
			Message: fmt.Sprintf("%s gave up %d partitions as lost while still a member of group %s in its current generation %d (it did not leave; bound %d)",
				e.Node, len(e.Partitions), e.Group, joined, bound)}
	}
}

// commitLost records the pending over-revocation (no close followed it at
// its instant).
func (o *oracleSet) commitLost() {
	p := o.promise
	f := p.pendingLost
	p.pendingLost = nil
	if f == nil || p.fired[scenario.OracleOverRevocation+f.Group] {
		return
	}
	p.fired[scenario.OracleOverRevocation+f.Group] = true
	p.overRevoked = append(p.overRevoked, *f)
}

// closeHandovers ends the open double ownerships that match at at and
// judges each.
func (o *oracleSet) closeHandovers(at time.Duration, match func(handover) bool) {
	p := o.promise
	kept := p.open[:0]
	for _, h := range p.open {
		if match(h) {
			o.judgeHandover(h, at)
		} else {
			kept = append(kept, h)
		}
	}
	p.open = kept
}

func (o *oracleSet) judgeHandover(h handover, at time.Duration) {
	p := o.promise
	key := scenario.OracleHandoverBeforeRevoke + h.group
	if p.fired[key] || at-h.since <= o.cfg.Handover {
		return
	}
	p.fired[key] = true
	p.handover = append(p.handover, Finding{Oracle: scenario.OracleHandoverBeforeRevoke, Group: h.group, Node: h.to,
		AtMs: int64(h.since / time.Millisecond),
		Message: humanf("%s-%d was assigned to %s at %v while %s, still a member of group %s, owned it (cooperative: revoke first), for %v (bound %v)",
			h.part.Topic, h.part.Partition, h.to, h.since, h.from, h.group, at-h.since, o.cfg.Handover)})
}

// finishPromise judges the double ownerships still open at end and the
// false NOT_COORDINATOR marks among the run's observations.
func (o *oracleSet) finishPromise(end time.Duration, obs []Observation) []Finding {
	p := o.promise
	o.commitLost()
	o.closeHandovers(end, func(handover) bool { return true })
	out := append(slices.Clone(p.handover), p.overRevoked...)
	if !o.cfg.Enabled(scenario.OracleFalseNotCoordinator) {
		return out
	}
	k, win := o.cfg.FalseNotCoordinator, o.cfg.FalseNotCoordinatorWindow
	if k == 0 {
		k = defaultFalseNotCoordinator
	}
	if win == 0 {
		win = defaultFalseNotCoordinatorWindow
	}
	marks := map[string][]time.Duration{}
	var groups []string
	for _, ob := range obs {
		if ob.Kind != tracing.ObsDeadMark || !ob.False || ob.Dead != protocol.DeadErrorResponse || ob.DeadErr != protocol.NotCoordinator ||
			!p.self[deadMark{ob.Member, time.Duration(ob.At)}] {
			continue
		}
		if _, ok := marks[ob.Group]; !ok {
			groups = append(groups, ob.Group)
		}
		marks[ob.Group] = append(marks[ob.Group], time.Duration(ob.At))
	}
	for _, g := range groups {
		ts := marks[g]
		for i, j := 0, 0; j < len(ts); j++ {
			for ts[j]-ts[i] >= win {
				i++
			}
			if j-i+1 > k {
				var who []string
				for _, ob := range obs {
					if ob.Kind == tracing.ObsDeadMark && ob.Group == g && ob.False && ob.DeadErr == protocol.NotCoordinator &&
						p.self[deadMark{ob.Member, time.Duration(ob.At)}] &&
						time.Duration(ob.At) >= ts[i] && time.Duration(ob.At) <= ts[j] && !slices.Contains(who, ob.Broker) {
						who = append(who, ob.Broker)
					}
				}
				out = append(out, Finding{Oracle: scenario.OracleFalseNotCoordinator, Group: g, AtMs: int64(ts[j] / time.Millisecond),
					Message: humanf("group %s: %d false coordinator-dead marks on NOT_COORDINATOR from its live coordinator (broker %s) within %v, %v–%v (bound %d)",
						g, j-i+1, strings.Join(who, ", "), win, ts[i], ts[j], k)})
				break
			}
		}
	}
	return out
}

// false-not-coordinator defaults: a member that is wrongly told
// NOT_COORDINATOR marks the coordinator dead and looks it up again (one
// FindCoordinator round trip and retry.backoff.ms); a few such marks in a
// minute over a whole group is not yet a storm.
const (
	defaultFalseNotCoordinator       = 5
	defaultFalseNotCoordinatorWindow = time.Minute
)
