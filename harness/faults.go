package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// applyFault starts fault i of the scenario's timeline.
func (w *world) applyFault(i int) {
	f := &w.faults[i]
	now := w.q.Now()
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvFault, Node: "harness", Reason: string(f.Kind), Detail: faultTarget(f)}, Scope: faultScope(f)}
	w.emit(&w.tev)
	switch f.Kind {
	case scenario.FaultCrash, scenario.FaultHostDown:
		if b := w.brokerTarget(f.Target); b != nil {
			if b.down {
				// Already down (crashed or host-down), as a member that is
				// not alive: nothing changes and nothing ends. Its end
				// would bring the broker up while the first fault still
				// holds it down (a crash's end on a host still down: up
				// for the harness, silent in the network, for ever).
				return
			}
			w.brokerDown(b, f.Kind == scenario.FaultHostDown)
			if f.For > 0 {
				w.q.Schedule(now.Add(f.For), ev{kind: evFaultEnd, idx: int32(i), inc: uint32(b.node)})
			}
			return
		}
		if s := w.slotByName(f.Target); s != nil && s.alive {
			if f.Kind == scenario.FaultHostDown {
				w.net.HostDown(s.node)
				w.stopProcess(s, protocol.ProcessHostDown)
			} else {
				w.stopProcess(s, protocol.ProcessCrashed)
			}
			if f.For > 0 {
				w.q.Schedule(now.Add(f.For), ev{kind: evFaultEnd, idx: int32(i), inc: uint32(s.node)})
			}
		}
	case scenario.FaultRestart:
		if s := w.slotByName(f.Target); s != nil {
			w.stopProcess(s, protocol.ProcessCrashed) // restarting a live process kills it first
			if !w.net.IsHostDown(s.node) {
				// A process cannot start on a host that is down: it
				// starts when the host is back (host-down with `for`),
				// or never.
				w.startProcess(s)
			}
		}
	case scenario.FaultLeave:
		if s := w.slotByName(f.Target); s != nil && s.alive {
			w.closeProcess(s)
		}
	case scenario.FaultJoin:
		g := w.groupByID(f.Target)
		// The next of the slots made for join faults: the group's last
		// cohort (world.go).
		if g != nil && g.members+g.joins < len(g.slots) {
			s := w.slots[g.slots[g.members+g.joins]]
			g.joins++
			w.startProcess(s)
		}
	case scenario.FaultPause:
		if s := w.slotByName(f.Target); s != nil && s.alive && !s.paused {
			s.paused = true
			w.catchUp(s)
			s.m.Pause(now)
			w.processEvent(s, now, protocol.ProcessPaused)
			w.q.Schedule(now.Add(f.For), ev{kind: evResume, idx: s.id, inc: s.inc})
		}
	case scenario.FaultSlowPoll:
		if s := w.slotByName(f.Target); s != nil && s.alive && !s.paused {
			w.catchUp(s)
			s.m.SlowPoll(now, f.For, &w.cout)
			w.flushMember(s)
		}
	case scenario.FaultPartition:
		a, b := w.resolveNode(f.Peers[0], f.Peers[1]), w.resolveNode(f.Peers[1], f.Peers[0])
		w.cut(a, b)
		if f.Direction != scenario.DirectionOneWay {
			w.cut(b, a)
		}
		w.q.Schedule(now.Add(f.For), ev{kind: evFaultEnd, idx: int32(i)})
		f.Peers = [2]string{w.nodeName(a), w.nodeName(b)} // resolved once: heal what was cut
	case scenario.FaultLoss:
		w.q.Schedule(now.Add(f.For), ev{kind: evFaultEnd, idx: int32(i)})
		w.ext.loss = append(w.ext.loss, i)
		w.net.SetLoss(f.Loss)
	case scenario.FaultLatency:
		w.q.Schedule(now.Add(f.For), ev{kind: evFaultEnd, idx: int32(i)})
		w.ext.latency = append(w.ext.latency, i)
		w.net.SetLatency(toSimDist(f.Latency))
	case scenario.FaultFilter:
		w.q.Schedule(now.Add(f.For), ev{kind: evFaultEnd, idx: int32(i)})
		w.addFilter(i)
	case scenario.FaultCoordinatorFailover:
		if g := w.groupByID(f.Target); g != nil {
			w.failover(g)
		}
	case scenario.FaultAddPartitions:
		w.addPartitions(f.Target, f.Partitions)
	case scenario.FaultRollingRestart:
		g := w.groupByID(f.Target)
		if g == nil {
			return
		}
		for k := 0; k < g.members; k++ { // the initial members of every cohort, in index order
			at := now.Add(time.Duration(k) * f.Interval)
			w.q.Schedule(at, ev{kind: evFaultEnd, idx: int32(i), inc: rollingStep{member: k}.inc()})
			w.q.Schedule(at.Add(f.Downtime), ev{kind: evFaultEnd, idx: int32(i), inc: rollingStep{member: k, start: true}.inc()})
		}
	}
}

// endFault ends fault i's window (or runs one step of a rolling restart).
func (w *world) endFault(i int) {
	f := &w.faults[i]
	now := w.q.Now()
	switch f.Kind {
	case scenario.FaultPartition:
		a, b := w.nodeByName(f.Peers[0]), w.nodeByName(f.Peers[1])
		w.heal(a, b)
		if f.Direction != scenario.DirectionOneWay {
			w.heal(b, a)
		}
	case scenario.FaultFilter:
		w.removeFilter(i)
	case scenario.FaultLoss:
		if j := endWindow(&w.ext.loss, i); j >= 0 {
			w.net.SetLoss(w.faults[j].Loss)
		} else {
			w.setLoss(w.sc.Network.Loss, w.sc.Network.LossToBroker)
		}
	case scenario.FaultLatency:
		if j := endWindow(&w.ext.latency, i); j >= 0 {
			w.net.SetLatency(toSimDist(w.faults[j].Latency))
		} else {
			w.net.SetLatency(toSimDist(w.sc.Network.Latency))
		}
	case scenario.FaultRollingRestart:
		return // steps are dispatched by fire with the step in inc
	default:
		return
	}
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvFaultEnd, Node: "harness", Reason: string(f.Kind), Detail: faultTarget(f)}, Scope: faultScope(f)}
	w.emit(&w.tev)
}

// rollingStep is one step of a rolling restart: close member k's process,
// or start its new one. A step travels in its fault's evFaultEnd event (inc,
// packed by inc and read by rollingStepOf), so it keeps the tie-break
// identity of that fault's events.
type rollingStep struct {
	member int  // the member's index among the group's initial members
	start  bool // start the new process (else close the old one)
}

func (s rollingStep) inc() uint32 {
	v := uint32(s.member) << 1
	if s.start {
		v |= 1
	}
	return v
}

func rollingStepOf(inc uint32) rollingStep {
	return rollingStep{member: int(inc >> 1), start: inc&1 == 1}
}

// runRollingStep runs one step of rolling-restart fault i.
func (w *world) runRollingStep(i int, step rollingStep) {
	f := &w.faults[i]
	g := w.groupByID(f.Target)
	s := w.slots[g.slots[step.member]]
	if !step.start {
		if s.alive {
			w.closeProcess(s)
		}
		return
	}
	if f.Set != nil {
		s.rareState().set = f.Set // its processes from now on run the new client settings
	}
	if s.alive {
		// The old process is still inside close() (its commit, callback or
		// LeaveGroup under way): the new one starts when it exits.
		s.rareState().startAfterClose = true
		return
	}
	if !w.net.IsHostDown(s.node) { // as FaultRestart: not on a host that is down
		w.startProcess(s)
	}
}

// closeProcess is the application's shutdown (Shutdown: wakeup(), then
// close() on the polling thread once its processing step or callback is
// done, at once when it is blocked in poll()), then a graceful
// KafkaConsumer.close(): the member commits (auto-commit), runs its revoke
// callback and sends LeaveGroup (unless static) in Java's order, which
// takes time (model/classic/client/close.go, shutdown.go); the process ends
// when the member stops (flushMember), "closed".
func (w *world) closeProcess(s *slot) {
	if s.paused {
		// A frozen process cannot close itself; it ends as a crash would.
		w.stopProcess(s, protocol.ProcessCrashed)
		return
	}
	w.catchUp(s)
	s.m.Shutdown(w.q.Now(), &w.cout)
	w.flushMember(s)
}

// failover moves the group's coordinator to the next broker, as a
// __consumer_offsets leadership change: the old broker resigns (parked
// requests answered NOT_COORDINATOR), every broker's metadata points to the
// new one, which loads the last persisted group record for load.time.
func (w *world) failover(g *groupState) { w.moveCoordinator(g, false) }

// moveCoordinator moves g's coordinator to the next live broker; a dead old
// coordinator (oldDead) cannot resign.
func (w *world) moveCoordinator(g *groupState, oldDead bool) {
	now := w.q.Now()
	old := w.brokers[g.coord]
	next := g.coord
	for k := 1; k <= len(w.brokers); k++ {
		c := (g.coord + int32(k)) % int32(len(w.brokers))
		if !w.brokers[c].down {
			next = c
			break
		}
	}
	if next == g.coord {
		return // no live broker to take over
	}
	g.coord = next
	nb := w.brokers[g.coord]
	if !oldDead && !old.down {
		old.b.Resign(now, g.id, &w.bout)
		w.flushBroker(old)
	}
	for _, b := range w.brokers {
		if !b.down {
			b.b.SetCoordinator(g.id, g.coord)
		}
	}
	w.electHere(g, nb, old)
}

// electHere makes nb the group's coordinator (it was old): it loads the
// last persisted group record for load.time.
func (w *world) electHere(g *groupState, nb, old *broker) {
	now := w.q.Now()
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvBrokerRole, Node: nb.name, Group: g.id, Peer: old.name}}
	w.emit(&w.tev)
	var rec *coordinator.GroupRecord
	if g.record != nil {
		r := *g.record
		rec = &r
	}
	w.watch.startFailover(g, now, sim.Instant(w.sc.Coordinator.LoadTime))
	nb.b.Elect(now, g.id, w.sc.Coordinator.LoadTime, rec, &w.bout)
	w.flushBroker(nb)
	w.electConsumer(g, nb)
}

// faultTarget is the fault event's detail: the target, "a|b" for a
// partition ("a>b" one way: a's messages to b are lost), and the selection of
// a filter.
func faultTarget(f *scenario.Fault) string {
	switch f.Kind {
	case scenario.FaultPartition:
		if f.Direction == scenario.DirectionOneWay {
			return f.Peers[0] + ">" + f.Peers[1]
		}
		return f.Peers[0] + "|" + f.Peers[1]
	case scenario.FaultFilter:
		return filterDetail(f.Filter)
	case scenario.FaultAddPartitions:
		return fmt.Sprintf("%s partitions=%d", f.Target, f.Partitions)
	}
	return f.Target
}

// faultScope is what fault f touches, typed (tracing.FaultScope): the
// facts faultTarget writes into the event's Detail for people.
func faultScope(f *scenario.Fault) *tracing.FaultScope {
	sc := &tracing.FaultScope{}
	switch f.Kind {
	case scenario.FaultPartition:
		sc.Nodes = slices.DeleteFunc(slices.Clone(f.Peers[:2]), func(p string) bool { return p == "" })
	case scenario.FaultFilter:
		sc.FilterMember = f.Filter.Member
	case scenario.FaultAddPartitions:
	default:
		if f.Target != "" {
			sc.Nodes = []string{f.Target}
		}
		sc.Broker = f.Target == scenario.CoordinatorName || strings.HasPrefix(f.Target, scenario.BrokerPrefix)
	}
	return sc
}

// addPartitions raises topic's partition count to n (an add-partitions
// fault): every group subscribed to it gets the new partitions in its
// cluster metadata (the clients see them at their next metadata refresh)
// and in its ownership metrics (unowned from now until a member owns them).
func (w *world) addPartitions(topic string, n int) {
	now := w.q.Now()
	for _, g := range w.groups {
		if g.cluster == nil {
			continue
		}
		i := slices.IndexFunc(g.cluster.Topics, func(t assign.Topic) bool { return t.Name == topic })
		if i < 0 || int(g.cluster.Topics[i].Partitions) >= n {
			continue
		}
		before := g.cluster.Topics[i].Partitions
		g.cluster.Topics[i].Partitions = int32(n)
		g.cluster.Version++
		m := g.m
		m.integrate(now)
		for p := before; p < int32(n); p++ {
			if m.index != nil {
				m.addIndex(protocol.TopicPartition{Topic: topic, Partition: p}, g.nparts+int(p-before))
			}
			m.owners = append(m.owners, 0)
			m.zero++
			if m.lastOwner != nil {
				m.lastOwner = append(m.lastOwner, 0)
				m.mark = append(m.mark, 0)
			}
		}
		g.addPartitions(topic, before, int32(n)-before)
	}
	// The brokers' metadata image (KRaft: every broker gets the topic
	// delta): each consumer-group coordinator requests a metadata refresh
	// of the groups subscribed to the topic, bumped at their next
	// heartbeat (ccoord.Coordinator.AddPartitions).
	if i := slices.IndexFunc(w.grown, func(t assign.Topic) bool { return t.Name == topic }); i >= 0 {
		w.grown[i].Partitions = int32(n)
	} else {
		w.grown = append(w.grown, assign.Topic{Name: topic, Partitions: int32(n)})
	}
	for _, b := range w.brokers {
		if b.cg != nil {
			b.cg.AddPartitions(topic, int32(n))
		}
	}
}

// slotByName maps a member name a scenario writes ("<group>-<index>": a
// fault's target, a filter's member) to its slot, or nil. The trace's
// consumers never need it: an event carries its slot (TraceEvent.Member).
func (w *world) slotByName(name string) *slot {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return nil
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return nil
	}
	g := w.groupByID(name[:i])
	if g == nil || n >= len(g.slots) {
		return nil
	}
	return w.slots[g.slots[n]]
}

func (w *world) groupByID(id string) *groupState {
	for _, g := range w.groups {
		if g.id == id {
			return g
		}
	}
	return nil
}

// resolveNode maps a partition endpoint to a node: a member name, or
// "coordinator" = the coordinator of the other endpoint's group (of the first
// group when both are "coordinator").
func (w *world) resolveNode(name, other string) sim.NodeID {
	if name != "coordinator" {
		return w.nodeByName(name)
	}
	g := w.groups[0]
	if s := w.slotByName(other); s != nil {
		g = w.groups[s.group]
	}
	return w.brokers[g.coord].node
}

func (w *world) nodeByName(name string) sim.NodeID {
	for _, b := range w.brokers {
		if b.name == name {
			return b.node
		}
	}
	if s := w.slotByName(name); s != nil {
		return s.node
	}
	panic("harness: unknown node " + name)
}

// brokerTarget resolves a crash or host-down target to a broker: a broker
// name, or "coordinator" (the first group's coordinator now).
func (w *world) brokerTarget(name string) *broker {
	if name == scenario.CoordinatorName {
		return w.brokers[w.groups[0].coord]
	}
	for _, b := range w.brokers {
		if b.name == name {
			return b
		}
	}
	return nil
}

// recoverNode ends a crash or host-down with `for`: the host boots (or the
// process restarts) and the node is back. node is the sim node.
func (w *world) recoverNode(i int, node sim.NodeID) {
	f := &w.faults[i]
	now := w.q.Now()
	if int(node) < len(w.brokers) {
		w.brokerUp(w.brokers[node], f.Kind == scenario.FaultHostDown)
	} else {
		s := w.slots[int(node)-len(w.brokers)]
		if f.Kind == scenario.FaultHostDown {
			w.net.HostUp(s.node, true)
		}
		w.startProcess(s)
	}
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvFaultEnd, Node: "harness", Reason: string(f.Kind), Detail: w.nodeName(node)},
		Scope: &tracing.FaultScope{Broker: int(node) < len(w.brokers), Nodes: []string{w.nodeName(node)}}}
	w.emit(&w.tev)
}

// brokerDown is a broker's process crashing (its kernel closes every
// connection: FIN/RST reach the members) or its host going silent
// (hostDown: nothing is sent; members notice through their own timers).
// Its group state is lost. After coordinator.failover.delay (the session
// timeout of the metadata mode, less the phase of the broker's last
// heartbeat in KRaft mode (fenceDelay): KRaft's broker.session.timeout.ms, or
// zookeeper.session.timeout.ms, when the broker's ephemeral znode expires
// and the ZooKeeper-mode controller sees it gone) the controller fences it
// and the coordinator role of its groups moves to another broker, which
// loads them (coordinator-failover's load model).
func (w *world) brokerDown(b *broker, hostDown bool) {
	if b.down {
		return
	}
	now := w.q.Now()
	b.down = true
	b.epoch++
	b.muteReset(w)
	w.q.Cancel(&b.timer)
	state := protocol.ProcessCrashed
	if hostDown {
		state = protocol.ProcessHostDown
		w.net.HostDown(b.node)
	} else {
		w.net.Crash(b.node)
		for _, s := range w.slots { // slot order: deterministic
			if !s.alive {
				continue
			}
			for l := range s.allLinks() {
				if l.broker == int32(b.node) {
					w.net.Abort(now, b.node, s.node, l.ch)
				}
			}
		}
	}
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvBrokerProcess, Node: b.name, State: state.String(), Process: state}}
	w.emit(&w.tev)
	w.q.Schedule(now.Add(b.fenceDelay(&w.sc.Coordinator, w.phase)), ev{kind: evFence, idx: int32(b.node), inc: b.epoch})
}

// brokerUp is the broker's process (or host) back: a fresh broker with no
// group state, coordinator of nothing until a failover hands it a group.
// A broker back before it was fenced was fenced by its restart (KRaft
// fences the old incarnation when the new one registers). Deviation in
// ZooKeeper mode: a broker restarted while its old session's znode still
// exists fails to register (KafkaZkClient.CheckedEphemeral
// getAfterNodeExists @2.5.0) until that session expires; here it is back at
// once, as in KRaft.
func (w *world) brokerUp(b *broker, hostDown bool) {
	if !b.down {
		return
	}
	now := w.q.Now()
	w.fence(b, b.epoch)
	b.down = false
	if hostDown {
		w.net.HostUp(b.node, true)
	} else {
		w.net.Restart(b.node)
	}
	prev := b.b
	b.b = coordinator.NewBroker(b.cfg)
	b.b.ContinueMemberIDs(prev)
	w.restartConsumer(b)
	for _, g := range w.groups {
		b.b.SetCoordinator(g.id, g.coord)
	}
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: tracing.EvBrokerProcess, Node: b.name, State: protocol.ProcessStarted.String(), Process: protocol.ProcessStarted}}
	w.emit(&w.tev)
	// A group whose coordinator could not move (no other broker was up)
	// is coordinated by this broker again: it loads the group as a new
	// leader of its __consumer_offsets partition would.
	for _, g := range w.groups {
		if g.coord == int32(b.node) {
			w.electHere(g, b, b)
		}
	}
}

// fence moves the coordinator role of every group of the dead broker b to
// the next live broker (once per death: epoch).
func (w *world) fence(b *broker, epoch uint32) {
	if !b.down || b.epoch != epoch || b.fenced == epoch {
		return
	}
	b.fenced = epoch
	for _, g := range w.groups {
		if g.coord == int32(b.node) {
			w.moveCoordinator(g, true)
		}
	}
}
