package harness

import (
	"time"

	"github.com/rebalsim/rebalsim/model/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// applyFault starts fault i of the scenario's timeline.
func (w *world) applyFault(i int) {
	f := &w.faults[i]
	now := w.q.Now()
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: EvFault, Node: "harness", Reason: string(f.Kind), Detail: faultTarget(f)}}
	w.emit(&w.tev)
	switch f.Kind {
	case scenario.FaultCrash:
		if s := w.slotByName(f.Target); s != nil {
			w.stopProcess(s, "crashed")
		}
	case scenario.FaultRestart:
		if s := w.slotByName(f.Target); s != nil {
			w.stopProcess(s, "crashed") // restarting a live process kills it first
			w.startProcess(s)
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
			s.m.Pause(protocol.Instant(now))
			w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: EvProcess, Node: s.name, Group: w.groups[s.group].id, State: "paused"}}
			w.emit(&w.tev)
			w.q.Schedule(now.Add(f.For), ev{kind: evResume, idx: s.id, inc: s.inc})
		}
	case scenario.FaultSlowPoll:
		if s := w.slotByName(f.Target); s != nil && s.alive && !s.paused {
			w.catchUp(s)
			s.m.SlowPoll(protocol.Instant(now), f.For, &w.cout)
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
	case scenario.FaultRollingRestart:
		g := w.groupByID(f.Target)
		if g == nil {
			return
		}
		for k := 0; k < g.members; k++ { // the initial members of every cohort, in index order
			at := now.Add(time.Duration(k) * f.Interval)
			w.q.Schedule(at, ev{kind: evFaultEnd, idx: int32(i), inc: uint32(k)<<1 | 0})
			w.q.Schedule(at.Add(f.Downtime), ev{kind: evFaultEnd, idx: int32(i), inc: uint32(k)<<1 | 1})
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
			w.net.SetLoss(w.sc.Network.Loss)
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
	if f.Kind != scenario.FaultRollingRestart {
		w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: EvFaultEnd, Node: "harness", Reason: string(f.Kind), Detail: faultTarget(f)}}
		w.emit(&w.tev)
	}
}

// rollingStep is called for a rolling-restart step: k<<1|0 closes member k,
// k<<1|1 starts its new process.
func (w *world) rollingStep(i int, step uint32) {
	f := &w.faults[i]
	g := w.groupByID(f.Target)
	s := w.slots[g.slots[step>>1]]
	if step&1 == 0 {
		if s.alive {
			w.closeProcess(s)
			w.stopProcess(s, "closed")
		}
		return
	}
	w.startProcess(s)
}

// closeProcess is a graceful KafkaConsumer.close(): the member sends
// LeaveGroup (unless static) and the process ends right after.
func (w *world) closeProcess(s *slot) {
	if s.paused {
		// A frozen process cannot close itself; it ends as a crash would.
		w.stopProcess(s, "crashed")
		return
	}
	w.catchUp(s)
	s.m.Close(protocol.Instant(w.q.Now()), &w.cout)
	w.flushMember(s)
	w.stopProcess(s, "closed")
}

// failover moves the group's coordinator to the next broker, as a
// __consumer_offsets leadership change: the old broker resigns (parked
// requests answered NOT_COORDINATOR), every broker's metadata points to the
// new one, which loads the last persisted group record for load.time.
func (w *world) failover(g *groupState) {
	now := w.q.Now()
	old := w.brokers[g.coord]
	g.coord = (g.coord + 1) % int32(len(w.brokers))
	nb := w.brokers[g.coord]
	old.b.Resign(protocol.Instant(now), g.id, &w.bout)
	w.flushBroker(old)
	for _, b := range w.brokers {
		b.b.SetCoordinator(g.id, g.coord)
	}
	w.tev = TraceEvent{At: now, Event: protocol.Event{Kind: EvBrokerRole, Node: nb.name, Group: g.id, Peer: old.name}}
	w.emit(&w.tev)
	var rec *coordinator.GroupRecord
	if g.record != nil {
		r := *g.record
		rec = &r
	}
	w.startFailover(g, now, sim.Instant(w.sc.Coordinator.LoadTime))
	nb.b.Elect(protocol.Instant(now), g.id, w.sc.Coordinator.LoadTime, rec, &w.bout)
	w.flushBroker(nb)
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
	}
	return f.Target
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
