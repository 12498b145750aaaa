package harness

import (
	"github.com/rebalsim/rebalsim/model/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
)

// ObsKind is the kind of a typed observation: what the harness's one
// classifier made of the model events of a run. Every view of a run (the
// JSON summary, `simrun run`'s timeline, `simrun explain`, Perfetto and
// --timeline) reads observations, never the reason text of trace events, so
// they cannot disagree on what an eviction is.
type ObsKind uint8

const (
	// ObsEviction: the coordinator removed a member it judged gone: its
	// session expired, it missed the rebalance, sync or new-member timer, the
	// group was over group.max.size, or the member left because its
	// poll timer (max.poll.interval.ms) expired. False when the member's
	// process was alive (a poll-timeout leave always comes from a live
	// process; a max-size removal is never false: it is not a liveness
	// judgement).
	ObsEviction ObsKind = iota + 1
	// ObsLeave: a member left with LeaveGroup for any other reason (close).
	ObsLeave
	// ObsFence: a static member's old member id was replaced by a new
	// JoinGroup with the same group.instance.id (KIP-345). Not an eviction.
	ObsFence
	// ObsDeadMark: a client marked its coordinator unknown. False when the
	// broker it used was alive and still the group's coordinator.
	ObsDeadMark
	// ObsGeneration: the coordinator completed a join phase (a generation
	// bump).
	ObsGeneration
	// ObsSettle: a settle episode ended (or was still open at the end of the
	// run): Episode holds it.
	ObsSettle
	// ObsFault: a fault started (explicit, swarm or rolling).
	ObsFault
)

var obsText = [...]string{"", "eviction", "leave", "fence", "coordinator-dead", "generation", "settle-episode", "fault"}

func (k ObsKind) String() string {
	if int(k) < len(obsText) {
		return obsText[k]
	}
	return "unknown"
}

// Observation is one classified fact of a run. Seq is the index of the
// trace event that produced it (Result.Trace[Seq] when the trace was kept).
type Observation struct {
	Kind ObsKind
	At   sim.Instant
	Seq  int64
	// Group is the group id; Member the member name ("payments-3") whose
	// process the fact concerns, MemberID the coordinator's member id, and
	// Process the incarnation of the member's slot (1 for the first
	// process; 0 when unknown).
	Group    string
	Member   string
	MemberID string
	Process  uint32
	False    bool
	Removal  protocol.RemovalReason // ObsEviction, ObsLeave, ObsFence
	Leave    protocol.LeaveReason   // ObsEviction by poll timeout, ObsLeave
	Dead     protocol.DeadReason    // ObsDeadMark
	DeadErr  protocol.ErrorCode     // ObsDeadMark with DeadErrorResponse
	Broker   string                 // ObsDeadMark: the coordinator the client gave up on
	Gen      int32                  // ObsGeneration, ObsDeadMark: the generation
	Fault    string                 // ObsFault: the fault kind; Detail its target
	Detail   string
	Episode  *Rebalance // ObsSettle
}

// Cause names why an eviction, leave, fence or dead mark happened, in the
// vocabulary of INTERFACE.md's triggers ("session-expired", "poll-timeout",
// "rebalance-timeout", "sync-timeout", "new-member-timeout", "max-size",
// "fenced", "leave"; dead marks: "session-timeout", "request-timeout",
// "disconnect", or the error code).
func (o *Observation) Cause() string {
	switch o.Kind {
	case ObsEviction, ObsLeave, ObsFence:
		if o.Removal == protocol.RemovalLeave && o.Leave == protocol.LeavePollTimeout {
			return "poll-timeout"
		}
		return o.Removal.String()
	case ObsDeadMark:
		return protocol.DeadReasonText(o.Dead, o.DeadErr)
	case ObsFault:
		return o.Fault
	}
	return ""
}

// Counts tallies observations per kind; the consistency tests compare the
// counts every view gives against it.
type Counts struct {
	Evictions, FalseEvictions int
	Leaves, Fences            int
	DeadMarks, FalseDeadMarks int
	Generations               int
	SettleEpisodes            int
}

// CountObservations tallies obs of one group ("" for all groups).
func CountObservations(obs []Observation, group string) Counts {
	var c Counts
	for i := range obs {
		o := &obs[i]
		if group != "" && o.Group != group {
			continue
		}
		switch o.Kind {
		case ObsEviction:
			c.Evictions++
			if o.False {
				c.FalseEvictions++
			}
		case ObsLeave:
			c.Leaves++
		case ObsFence:
			c.Fences++
		case ObsDeadMark:
			c.DeadMarks++
			if o.False {
				c.FalseDeadMarks++
			}
		case ObsGeneration:
			c.Generations++
		case ObsSettle:
			c.SettleEpisodes++
		}
	}
	return c
}

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
		owner := memberProcess{slot: ci.slot, inc: ci.inc}
		if w.memberOf == nil {
			w.memberOf = make(map[string]memberProcess)
		}
		if cur, ok := w.memberOf[jr.MemberID]; ok && cur == owner {
			continue
		}
		w.memberOf[jr.MemberID] = owner
	}
}

// record keeps an observation and counts it in its group's metrics.
func (w *world) record(g *groupState, o Observation) {
	o.Seq = w.rec.count - 1
	o.Group = g.id
	m := g.m
	w.obs = append(w.obs, o)
	if o.At < m.from {
		return // before the measurement window: observed, not counted
	}
	switch o.Kind {
	case ObsEviction:
		m.evictions++
		if o.False {
			m.falseEvictions++
		}
	case ObsLeave:
		m.leaves++
	case ObsFence:
		m.fences++
	case ObsDeadMark:
		m.deadMarks++
		if o.False {
			m.falseDeadMarks++
		}
	case ObsGeneration:
		m.generations++
	}
}

// aliveSeconds is the slot's process's live time up to now inside the
// measurement window.
func (w *world) aliveSeconds(s *slot, now sim.Instant) float64 {
	from := max(s.aliveSince, w.groups[s.group].m.from)
	if now <= from {
		return 0
	}
	return float64(now-from) / 1e9
}

// classifyRemoval turns the coordinator's EvMemberRemoved into an eviction,
// a leave or a fence of the process the member id belongs to.
func (w *world) classifyRemoval(g *groupState, e *TraceEvent) {
	o := Observation{At: e.At, MemberID: e.Peer, Removal: e.Removal}
	var s *slot
	if owner, ok := w.memberOf[e.Peer]; ok {
		s = w.slots[owner.slot]
		o.Member, o.Process = s.name, owner.inc
	}
	alive := s != nil && o.Process != 0 && s.alive && s.inc == o.Process
	switch e.Removal {
	case protocol.RemovalFenced:
		o.Kind = ObsFence
	case protocol.RemovalLeave:
		o.Kind = ObsLeave
		if s != nil && s.leaveInc == o.Process && s.lastLeave == protocol.LeavePollTimeout {
			o.Leave = protocol.LeavePollTimeout
			o.Kind = ObsEviction
			o.False = true // the process that left was alive: it was only slow
		} else if s != nil && s.leaveInc == o.Process {
			o.Leave = s.lastLeave
		}
	case protocol.RemovalMaxSize:
		o.Kind = ObsEviction
	default: // session, rebalance, sync and new-member timers
		o.Kind = ObsEviction
		o.False = alive
	}
	w.record(g, o)
}
