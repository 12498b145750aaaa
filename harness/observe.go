package harness

import (
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
)

// memberProcess is the process a coordinator member id belongs to: the slot
// and its incarnation, learnt from the JoinGroup response that gave the id
// out (not from any text).
type memberProcess struct {
	slot int32
	inc  uint32 // the incarnation whose connection asked
}

// noteMemberIDs maps the member ids that the broker's JoinGroup responses
// give out to the process whose connection asked (flushBroker calls it
// before the broker's events are recorded).
func (w *world) noteMemberIDs(replies []coordinator.Reply) {
	for _, r := range replies {
		jr, ok := r.Resp.(*protocol.JoinGroupResponse)
		if !ok || jr.MemberID == "" {
			continue
		}
		if int(r.Conn) >= len(w.conns) {
			continue
		}
		ci := w.conns[r.Conn]
		owner := memberProcess{slot: ci.slot, inc: ci.inc()}
		if w.watch.memberOf == nil {
			w.watch.memberOf = make(map[string]memberProcess)
		}
		if cur, ok := w.watch.memberOf[jr.MemberID]; ok && cur == owner {
			continue
		}
		w.watch.memberOf[jr.MemberID] = owner
	}
}

// record keeps an observation and counts it in its group's metrics.
func (w *watcher) record(g *groupState, o Observation) {
	o.Seq = w.rec.count - 1
	o.Group = g.id
	m := g.m
	w.obs = append(w.obs, o)
	if o.At < m.from {
		return // before the measurement window: observed, not counted
	}
	m.count(&o)
}

// aliveSeconds is the slot's process's live time up to now inside the
// measurement window.
func (w *watcher) aliveSeconds(s *slot, now sim.Instant) float64 {
	from := max(s.aliveSince, w.groups[s.group].m.from)
	if now <= from {
		return 0
	}
	return float64(now-from) / 1e9
}

// classifyRemoval turns the coordinator's EvMemberRemoved into an eviction,
// a leave or a fence of the process the member id belongs to.
func (w *watcher) classifyRemoval(g *groupState, e *TraceEvent) {
	o := Observation{At: e.At, MemberID: e.Peer, Removal: e.Removal}
	var s *slot
	if owner, ok := w.memberOf[e.Peer]; ok {
		s = w.slots[owner.slot]
		o.Member, o.Process = s.name, owner.inc
	}
	alive := s != nil && o.Process != 0 && s.alive && s.inc == o.Process
	switch e.Removal {
	case protocol.RemovalFenced:
		o.Kind = tracing.ObsFence
	case protocol.RemovalLeave:
		o.Kind = tracing.ObsLeave
		if s != nil && s.leaveInc == o.Process && s.lastLeave == protocol.LeavePollTimeout {
			o.Leave = protocol.LeavePollTimeout
			o.Kind = tracing.ObsEviction
			o.False = true // the process that left was alive: it was only slow
		} else if s != nil && s.leaveInc == o.Process {
			o.Leave = s.lastLeave
		}
	case protocol.RemovalMaxSize:
		o.Kind = tracing.ObsEviction
	default: // session, rebalance, sync and new-member timers
		o.Kind = tracing.ObsEviction
		o.False = alive
	}
	w.record(g, o)
}
