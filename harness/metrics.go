package harness

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
)

// groupMetrics accumulates one group's figures as DESIGN.md ("What a run
// measures") defines them.
type groupMetrics struct {
	// Coordinator view.
	coordState string
	coordGen   int32
	trigger    string // trigger of the rebalance being started (last EvRebalanceStart)

	// The open rebalance, if any.
	open       bool
	openStart  sim.Instant
	openTrig   string
	rebalances []Rebalance

	// settled counts live members that are STABLE and hold their assignment
	// for coordGen.
	settled int
	live    int

	deadMarks, falseDeadMarks int
	evictions, falseEvictions int
	memberSeconds             float64
	fatal                     []string

	// Partition ownership: owners per partition index; integrals.
	owners              []int32
	index               map[protocol.TopicPartition]int
	zero, extra         int // partitions with no owner; sum of (owners-1) over double-owned
	lastChange          sim.Instant
	tracking            bool
	firstFault          sim.Instant // Never when the run has no fault
	unownedAfterFaultPS float64

	// The failover being recovered from, if any: loadedAt is when the new
	// coordinator finishes loading; confirmed counts live members it has
	// since answered a successful Heartbeat or SyncGroup.
	failovers     []Failover
	recovering    bool
	failoverAt    sim.Instant
	loadedAt      sim.Instant
	confirmed     int
	unownedPS     float64
	doubleOwnedPS float64
	lastLeaveWhy  string
}

func newGroupMetrics(partitions int) *groupMetrics {
	return &groupMetrics{owners: make([]int32, partitions), zero: partitions, coordGen: -1, firstFault: sim.Never}
}

// integrate advances the partition-ownership integrals to now.
func (m *groupMetrics) integrate(now sim.Instant) {
	if m.tracking {
		dt := float64(now-m.lastChange) / 1e9
		m.unownedPS += dt * float64(m.zero)
		m.doubleOwnedPS += dt * float64(m.extra)
		if now > m.firstFault {
			from := max(m.lastChange, m.firstFault)
			m.unownedAfterFaultPS += float64(now-from) / 1e9 * float64(m.zero)
		}
	}
	m.lastChange = now
}

// startFailover begins measuring recovery from a failover at now whose new
// coordinator loads for load.
func (w *world) startFailover(g *groupState, now sim.Instant, load sim.Instant) {
	m := g.m
	if m.recovering {
		m.failovers = append(m.failovers, Failover{AtMs: int64(m.failoverAt) / 1e6, RecoveryMs: -1})
	}
	m.recovering, m.failoverAt, m.loadedAt, m.confirmed = true, now, now+load, 0
	for _, si := range g.slots {
		w.slots[si].confirmed = false
	}
}

// confirm notes a successful Heartbeat or SyncGroup answer from the group's
// coordinator to s, and ends the recovery once every live member has one
// and the group is Stable.
func (w *world) confirm(s *slot, now sim.Instant) {
	g := w.groups[s.group]
	m := g.m
	if !m.recovering || now < m.loadedAt || s.confirmed {
		return
	}
	s.confirmed = true
	m.confirmed++
	w.maybeRecovered(g, now)
}

func (w *world) maybeRecovered(g *groupState, now sim.Instant) {
	m := g.m
	if !m.recovering || m.coordState != "Stable" {
		return
	}
	n := 0
	for _, si := range g.slots {
		if s := w.slots[si]; s.alive && s.confirmed {
			n++
		}
	}
	if n < m.live {
		return
	}
	m.recovering = false
	m.failovers = append(m.failovers, Failover{AtMs: int64(m.failoverAt) / 1e6, RecoveryMs: int64(now-m.failoverAt) / 1e6})
}

func (m *groupMetrics) adjust(i int, delta int32) {
	before := m.owners[i]
	after := before + delta
	m.owners[i] = after
	if before == 0 {
		m.zero--
	}
	if after == 0 {
		m.zero++
	}
	if before > 1 {
		m.extra -= int(before - 1)
	}
	if after > 1 {
		m.extra += int(after - 1)
	}
}

// setOwned replaces the partitions the slot's process owns.
func (w *world) setOwned(s *slot, now []protocol.TopicPartition) {
	g := w.groups[s.group]
	m := g.m
	if len(s.owned) == 0 && len(now) == 0 {
		return
	}
	if m.index == nil {
		m.index = make(map[protocol.TopicPartition]int, len(g.partitions))
		for i, tp := range g.partitions {
			m.index[tp] = i
		}
	}
	m.integrate(w.q.Now())
	for _, tp := range s.owned {
		if i, ok := m.index[tp]; ok {
			m.adjust(i, -1)
		}
	}
	for _, tp := range now {
		if i, ok := m.index[tp]; ok {
			m.adjust(i, +1)
		}
	}
	s.owned = append(s.owned[:0], now...)
}

// observe updates metrics from one trace event.
func (w *world) observe(e *TraceEvent) {
	switch e.Kind {
	case protocol.EvAssigned, protocol.EvRevoked, protocol.EvMemberState, protocol.EvCoordinatorDead,
		protocol.EvCoordinatorFound, protocol.EvLeave:
		w.observeMember(e)
	case protocol.EvGroupState, protocol.EvRebalanceStart, protocol.EvMemberRemoved, protocol.EvGenerationComplete,
		protocol.EvMemberAdded:
		w.observeCoordinator(e)
	case EvProcess:
		s := w.slotByName(e.Node)
		if s == nil {
			return
		}
		m := w.groups[s.group].m
		switch e.State {
		case "started":
			if !m.tracking {
				m.tracking = true
				m.lastChange = e.At
			}
			m.live++
		case "crashed", "closed", "fatal", "host-down":
			m.live--
			if s.settledGen == m.coordGen && s.settledGen >= 0 {
				m.settled--
			}
			s.settledGen = -1
		}
		w.maybeCloseRebalance(w.groups[s.group], e.At)
		w.maybeRecovered(w.groups[s.group], e.At)
	}
}

// slotByName maps a member name ("<group>-<index>") to its slot, or nil.
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

func (w *world) observeMember(e *TraceEvent) {
	s := w.slotByName(e.Node)
	if s == nil {
		return
	}
	g := w.groups[s.group]
	m := g.m
	switch e.Kind {
	case protocol.EvAssigned:
		w.setOwned(s, e.Partitions)
		w.settle(s, e.Gen)
	case protocol.EvRevoked:
		// Partitions lists what was given up; keep the rest.
		kept := slices.DeleteFunc(slices.Clone(s.owned), func(tp protocol.TopicPartition) bool {
			return slices.Contains(e.Partitions, tp)
		})
		w.setOwned(s, kept)
	case protocol.EvMemberState:
		if e.State != "STABLE" && s.settledGen >= 0 {
			if s.settledGen == m.coordGen {
				m.settled--
			}
			s.settledGen = -1
		}
	case protocol.EvCoordinatorFound:
		if id, err := strconv.Atoi(strings.TrimPrefix(e.Peer, "broker-")); err == nil {
			s.coordSeen = int32(id)
		}
	case protocol.EvCoordinatorDead:
		m.deadMarks++
		// False when the broker the client used was in fact alive and still
		// the group's coordinator at that instant: not when a failover moved
		// the coordinator, nor when the broker's process or host was down.
		if s.coordSeen < 0 || s.coordSeen == g.coord && !w.brokers[g.coord].down {
			m.falseDeadMarks++
		}
		s.coordSeen = -1
	case protocol.EvLeave:
		// The client gives Java's reason text; a leave after the heartbeat
		// thread saw max.poll.interval.ms expire ("consumer poll timeout
		// has expired") is the poll-timeout trigger and an eviction.
		why := e.Reason
		if strings.Contains(why, "poll timeout") {
			why = "poll-timeout"
		}
		m.lastLeaveWhy = why
		s.lastLeave = why
	}
}

// settle records that the slot completed onJoinComplete at generation gen.
func (w *world) settle(s *slot, gen int32) {
	m := w.groups[s.group].m
	if s.settledGen == m.coordGen && s.settledGen >= 0 {
		m.settled--
	}
	s.settledGen = gen
	if gen == m.coordGen {
		m.settled++
	}
	w.maybeCloseRebalance(w.groups[s.group], w.q.Now())
}

func (w *world) observeCoordinator(e *TraceEvent) {
	g := w.groupByID(e.Group)
	if g == nil {
		return
	}
	m := g.m
	switch e.Kind {
	case protocol.EvRebalanceStart:
		// The coordinator emits it right after the state change that opened
		// the rebalance; name the trigger of a rebalance opened just now.
		m.trigger = e.Reason
		if m.open && m.openStart == e.At {
			m.openTrig = triggerName(e.Reason, g)
		}
	case protocol.EvGroupState:
		prev := m.coordState
		m.coordState = e.State
		if e.Gen != 0 || e.State == "Stable" {
			w.setCoordGen(g, e.Gen)
		}
		if e.State == "PreparingRebalance" && !m.open && (prev == "Stable" || prev == "Empty" || prev == "CompletingRebalance" || prev == "") {
			m.open = true
			m.openStart = e.At
			m.openTrig = triggerName(m.trigger, g)
		}
		w.maybeCloseRebalance(g, e.At)
		w.maybeRecovered(g, e.At)
	case protocol.EvGenerationComplete:
		w.setCoordGen(g, e.Gen)
	case protocol.EvMemberAdded:
		if w.memberClient == nil {
			w.memberClient = make(map[string]memberProcess)
		}
		// The member id belongs to the process now running in the slot
		// the client id names (its JoinGroup just arrived).
		owner := memberProcess{client: e.Detail}
		if s := w.slotByName(e.Detail); s != nil {
			owner.inc = s.inc
		}
		w.memberClient[e.Peer] = owner
	case protocol.EvMemberRemoved:
		owner := w.memberClient[e.Peer]
		s := w.slotByName(owner.client)
		// The member's process: the slot's process when it is the
		// incarnation that joined with this member id (a restarted slot runs
		// a new process; the old one's member was not its).
		alive := s != nil && s.alive && s.inc == owner.inc
		switch e.Reason {
		case "leave":
			if alive && s.lastLeave == "poll-timeout" {
				m.evictions++
				m.falseEvictions++ // a poll-timeout leave comes from a live process
			}
		case "session-expired", "rebalance-timeout", "sync-timeout", "new-member-timeout":
			m.evictions++
			if alive {
				m.falseEvictions++
			}
		}
	}
}

// setCoordGen moves the coordinator's generation and recounts settled
// members (once per generation, so O(members) per rebalance).
func (w *world) setCoordGen(g *groupState, gen int32) {
	m := g.m
	if gen == m.coordGen {
		return
	}
	m.coordGen = gen
	m.settled = 0
	for _, si := range g.slots {
		s := w.slots[si]
		if s.alive && s.settledGen == gen {
			m.settled++
		}
	}
}

// stableAtEnd is the summary's stable_at_end (INTERFACE.md): the
// coordinator's group is Stable, no rebalance is open, and every live
// member is STABLE in its generation holding its assignment — a member
// that started but never joined (its JoinGroup lost, say) is not.
func (m *groupMetrics) stableAtEnd() bool {
	return m.coordState == "Stable" && !m.open && m.settled >= m.live
}

// maybeCloseRebalance ends the open rebalance once the coordinator is Stable
// and every live member is STABLE in its generation holding its assignment.
func (w *world) maybeCloseRebalance(g *groupState, now sim.Instant) {
	m := g.m
	if !m.open || m.coordState != "Stable" || m.settled < m.live {
		return
	}
	m.open = false
	m.rebalances = append(m.rebalances, Rebalance{
		Generation: m.coordGen,
		StartMs:    int64(m.openStart) / 1e6,
		EndMs:      int64(now) / 1e6,
		DurationMs: int64(now-m.openStart) / 1e6,
		Trigger:    m.openTrig,
		Members:    m.live,
	})
}

// triggerName maps the coordinator's rebalance reason to INTERFACE.md's
// trigger vocabulary.
func triggerName(reason string, g *groupState) string {
	switch reason {
	case "join", "session-expired", "rebalance-timeout", "coordinator-failover", "metadata":
		return reason
	case "leave":
		if g.m.lastLeaveWhy == "poll-timeout" {
			return "poll-timeout"
		}
		return "leave"
	case "sync-timeout":
		return "rebalance-timeout"
	case "append-error":
		return "append-error"
	}
	return "other"
}
