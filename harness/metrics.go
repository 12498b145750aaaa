package harness

import (
	"slices"
	"strconv"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/sim"
)

// groupMetrics accumulates one group's figures as DESIGN.md ("What a run
// measures") defines them, one part per family of figures (after etcd's
// tracker.ProgressTracker and TigerBeetle's testing/cluster state checker):
// the coordinator's view, the settle episodes, the settled members, the
// classifier's counts, partition ownership and its integrals, and failover
// recovery. Each part is changed only by the events and observations of
// its family, so changing one figure cannot silently move another; the
// observers (observe in this file, record in observe.go) route each event
// or observation to the parts it concerns.
type groupMetrics struct {
	coordView
	episodeLog
	settling
	counts
	partitionOwners
	ownerIntegrals
	failoverRecovery
	// from starts the measurement window (scenario measure.from): counts,
	// integrals, member-hours and settle episodes before it are left out of
	// the summary (observations keep everything).
	from sim.Instant
}

// watcher computes a run's figures from its trace: it consumes every event
// the engine records (observe), classifies the coordinators' removals and
// the members' dead marks into observations (observe.go), and routes each
// event and observation to the metrics parts of its group. It reads the
// world's slots, groups and brokers (fixed once the world is built) and
// writes only the metrics: each group's groupMetrics and each slot's
// slotMetrics.
type watcher struct {
	slots   []*slot
	groups  []*groupState
	brokers []*broker
	q       *sim.Queue[ev] // the clock
	rec     *recorder      // the sequence number of the event observed
	// memberOf maps coordinator member ids to the process that got them in
	// a JoinGroup response (observe.go).
	memberOf map[string]memberProcess
	// obs are the run's typed observations (observe.go).
	obs []Observation
}

// groupByID is the group named id, or nil.
func (w *watcher) groupByID(id string) *groupState {
	for _, g := range w.groups {
		if g.id == id {
			return g
		}
	}
	return nil
}

// coordView is the group as its coordinator reports it (EvGroupState,
// EvRebalanceStart, EvGenerationComplete), and the one member event that
// names a rebalance's trigger.
type coordView struct {
	coordState protocol.GroupState
	coordGen   int32
	trigger    protocol.RebalanceReason // trigger of the rebalance being started (last EvRebalanceStart)
	everStable bool                     // the coordinator had the group Stable at least once
	// lastLeavePoll: the last LeaveGroup sent was a poll-timeout leave
	// (trigger naming: a leave the poll timeout caused is "poll-timeout").
	lastLeavePoll bool
}

// episodeLog is the settle episodes: the open one, if any, and the closed
// ones in the measurement window.
type episodeLog struct {
	open       bool
	openStart  sim.Instant
	openTrig   string
	rebalances []Rebalance
	// The open settle episode's first generation and generations spanned.
	openFirstGen int32
	openGens     int
}

// openEpisode opens a rebalance episode at at, triggered by trig.
func (l *episodeLog) openEpisode(at sim.Instant, trig string) {
	l.open = true
	l.openStart = at
	l.openTrig = trig
	l.openFirstGen, l.openGens = -1, 0
}

// close ends the open episode at now, at the coordinator's generation gen
// with members live members (incomplete: the run ended first), and
// returns it; it is kept if it began in the measurement window (from).
func (l *episodeLog) close(now sim.Instant, gen int32, members int, incomplete bool, from sim.Instant) Rebalance {
	first := l.openFirstGen
	if first < 0 {
		first = gen
	}
	r := Rebalance{
		Generation:      gen,
		FirstGeneration: first,
		Generations:     l.openGens,
		StartMs:         int64(l.openStart) / 1e6,
		EndMs:           int64(now) / 1e6,
		DurationMs:      int64(now-l.openStart) / 1e6,
		Trigger:         l.openTrig,
		Members:         members,
		Incomplete:      incomplete,
	}
	if l.openStart >= from {
		l.rebalances = append(l.rebalances, r)
	}
	return r
}

// spanned counts a generation the coordinator completed within the open
// episode, if one is open.
func (l *episodeLog) spanned(gen int32) {
	if !l.open {
		return
	}
	if l.openFirstGen < 0 {
		l.openFirstGen = gen
	}
	l.openGens++
}

// settling counts the live members and those of them that are STABLE and
// hold their assignment for the coordinator's generation.
type settling struct {
	settled int
	live    int
}

// counts are the classifier's counts (observe.go's record) and the
// members' own: what the summary reports as numbers of things.
type counts struct {
	deadMarks, falseDeadMarks int
	evictions, falseEvictions int
	leaves, fences            int
	// generations counts the coordinator's completed join phases
	// (generation bumps); clientRebalances the members' completed
	// rebalances (onJoinComplete after SyncGroup NONE, what the Java
	// client's rebalance-total metric counts, KIP-517), summed over members.
	generations      int
	clientRebalances int
	memberSeconds    float64
	fatal            []string
}

// count counts one classified observation.
func (c *counts) count(o *Observation) {
	switch o.Kind {
	case tracing.ObsEviction:
		c.evictions++
		if o.False {
			c.falseEvictions++
		}
	case tracing.ObsLeave:
		c.leaves++
	case tracing.ObsFence:
		c.fences++
	case tracing.ObsDeadMark:
		c.deadMarks++
		if o.False {
			c.falseDeadMarks++
		}
	case tracing.ObsGeneration:
		c.generations++
	}
}

// partitionOwners is who owns each partition now: owners per partition index,
// the partitions with none and the surplus owners, and the moves.
type partitionOwners struct {
	owners    []int32
	lastOwner []int32  // per partition: slot id + 1 of its last owner, 0 none
	mark      []uint32 // scratch for setOwned (stamp per partition)
	stamp     uint32
	// moved counts partitions moved (PartitionsMoved); movedAfterFault
	// those moved at or after the first fault.
	moved           int
	movedAfterFault int
	index           map[string][]int32
	zero, extra     int // partitions with no owner; sum of (owners-1) over double-owned
}

// ownerIntegrals are partitionOwners's partition-seconds: unowned, double
// owned, and unowned since the first fault.
type ownerIntegrals struct {
	lastChange          sim.Instant
	tracking            bool
	firstFault          sim.Instant // Never when the run has no fault
	unownedPS           float64
	doubleOwnedPS       float64
	unownedAfterFaultPS float64
}

// failoverRecovery is the failover being recovered from, if any, and the
// recoveries measured: loadedAt is when the new coordinator finishes
// loading; confirmed counts live members it has since answered a
// successful Heartbeat or SyncGroup.
type failoverRecovery struct {
	failovers  []Failover
	recovering bool
	failoverAt sim.Instant
	loadedAt   sim.Instant
	confirmed  int
}

// start begins measuring recovery from a failover at now whose new
// coordinator loads for load; a recovery still open is recorded as never
// reached (RecoveryMs -1) if it began in the measurement window (from).
func (f *failoverRecovery) start(now, load, from sim.Instant) {
	if f.recovering && f.failoverAt >= from {
		f.failovers = append(f.failovers, Failover{AtMs: int64(f.failoverAt) / 1e6, RecoveryMs: -1})
	}
	f.recovering, f.failoverAt, f.loadedAt, f.confirmed = true, now, now+load, 0
}

// awaits reports whether a member's successful answer at now counts toward
// the recovery: one is open and the new coordinator has loaded the group.
func (f *failoverRecovery) awaits(now sim.Instant) bool {
	return f.recovering && now >= f.loadedAt
}

// end ends the recovery at now, recorded if it began in the window.
func (f *failoverRecovery) end(now, from sim.Instant) {
	f.recovering = false
	if f.failoverAt >= from {
		f.failovers = append(f.failovers, Failover{AtMs: int64(f.failoverAt) / 1e6, RecoveryMs: int64(now-f.failoverAt) / 1e6})
	}
}

func newGroupMetrics(partitions int) *groupMetrics {
	return &groupMetrics{partitionOwners: partitionOwners{owners: make([]int32, partitions), zero: partitions},
		coordView: coordView{coordGen: -1}, ownerIntegrals: ownerIntegrals{firstFault: sim.Never}}
}

// integrate advances the partition-ownership integrals to now.
func (m *groupMetrics) integrate(now sim.Instant) {
	m.ownerIntegrals.integrate(now, m.from, &m.partitionOwners)
}

// integrate advances the integrals to now over the window from from, the
// owners having stayed as o has them since the last change.
func (n *ownerIntegrals) integrate(now, from sim.Instant, o *partitionOwners) {
	if n.tracking && now > from {
		dt := float64(now-max(n.lastChange, from)) / 1e9
		n.unownedPS += dt * float64(o.zero)
		n.doubleOwnedPS += dt * float64(o.extra)
		if now > n.firstFault {
			start := max(n.lastChange, n.firstFault, from)
			n.unownedAfterFaultPS += float64(now-start) / 1e9 * float64(o.zero)
		}
	}
	n.lastChange = now
}

// startFailover begins measuring recovery from a failover at now whose new
// coordinator loads for load.
func (w *watcher) startFailover(g *groupState, now sim.Instant, load sim.Instant) {
	g.m.failoverRecovery.start(now, load, g.m.from)
	for _, si := range g.slots {
		w.slots[si].confirmed = false
	}
}

// confirm notes a successful Heartbeat or SyncGroup answer from the group's
// coordinator to s, and ends the recovery once every live member has one
// and the group is Stable.
func (w *watcher) confirm(s *slot, now sim.Instant) {
	g := w.groups[s.group]
	if !g.m.awaits(now) || s.confirmed {
		return
	}
	s.confirmed = true
	g.m.confirmed++
	w.maybeRecovered(g, now)
}

func (w *watcher) maybeRecovered(g *groupState, now sim.Instant) {
	m := g.m
	if !m.recovering || m.coordState != protocol.GroupStable {
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
	m.failoverRecovery.end(now, m.from)
}

// replace moves owner's partitions from old to now (owner: a slot id + 1),
// counting a partition it newly owns that another owned last as moved
// (counted: inside the measurement window; afterFault: at or after the
// first fault).
func (m *partitionOwners) replace(old, now []protocol.TopicPartition, owner int32, counted, afterFault bool) {
	m.stamp++
	for _, tp := range old {
		if i, ok := m.indexOf(tp); ok {
			m.adjust(i, -1)
			m.mark[i] = m.stamp
		}
	}
	for _, tp := range now {
		if i, ok := m.indexOf(tp); ok {
			m.adjust(i, +1)
			if m.mark[i] != m.stamp { // newly owned
				if prev := m.lastOwner[i]; prev != 0 && prev != owner && counted {
					m.moved++
					if afterFault {
						m.movedAfterFault++
					}
				}
				m.lastOwner[i] = owner
			}
		}
	}
}

// adjust moves partition i's owner count by delta.
func (m *partitionOwners) adjust(i int, delta int32) {
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

// addIndex files partition tp at position i of the group's partition list
// (a topic's partitions are added in order: 0..n-1, then the ones an
// add-partitions fault adds). The index is 4 bytes a partition, not a map
// entry of about 65: a 100,000-partition group's index is 400 kB, not 6.5 MB.
func (m *partitionOwners) addIndex(tp protocol.TopicPartition, i int) {
	if ps := m.index[tp.Topic]; int(tp.Partition) == len(ps) {
		m.index[tp.Topic] = append(ps, int32(i))
		return
	}
	panic("harness: partition " + tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) + " filed out of order")
}

// indexOf is tp's position in the group's partition list (index).
func (m *partitionOwners) indexOf(tp protocol.TopicPartition) (int, bool) {
	ps := m.index[tp.Topic]
	if tp.Partition < 0 || int(tp.Partition) >= len(ps) {
		return 0, false
	}
	return int(ps[tp.Partition]), true
}

// setOwned replaces the partitions the slot's process owns.
func (w *watcher) setOwned(s *slot, now []protocol.TopicPartition) {
	g := w.groups[s.group]
	m := g.m
	if len(s.owned) == 0 && len(now) == 0 {
		return
	}
	if m.index == nil {
		m.index = map[string][]int32{}
		for i, tp := range g.partitionList() {
			m.addIndex(tp, i)
		}
	}
	at := w.q.Now()
	m.integrate(at)
	if m.lastOwner == nil {
		m.lastOwner = make([]int32, g.nparts)
		m.mark = make([]uint32, g.nparts)
	}
	m.replace(s.owned, now, s.id+1, at >= m.from, at >= m.firstFault)
	// Not a copy (24 bytes a partition per member, for every member): now is an
	// assigned event's list, which a model never changes once it has
	// published it (a client replaces its owned list whole; the kept trace
	// holds the same lists), or the fresh list EvRevoked's handling made.
	s.owned = now
}

// observe updates metrics from one trace event.
func (w *watcher) observe(e *TraceEvent) {
	switch e.Kind {
	case protocol.EvAssigned, protocol.EvRevoked, protocol.EvMemberState, protocol.EvCoordinatorDead,
		protocol.EvCoordinatorFound, protocol.EvLeave:
		w.observeMember(e)
	case protocol.EvGroupState, protocol.EvRebalanceStart, protocol.EvMemberRemoved, protocol.EvGenerationComplete:
		w.observeCoordinator(e)
	case tracing.EvFault:
		w.obs = append(w.obs, Observation{Kind: tracing.ObsFault, At: e.At, Seq: w.rec.count - 1, Fault: e.Reason, Detail: e.Detail})
	case tracing.EvProcess:
		i, ok := e.Member()
		if !ok {
			return
		}
		s := w.slots[i]
		m := w.groups[s.group].m
		switch e.Process {
		case protocol.ProcessStarted:
			s.lastLeave, s.leaveInc = protocol.LeaveUnknown, 0
			if !m.tracking {
				m.tracking = true
				m.lastChange = e.At
			}
			m.live++
		case protocol.ProcessCrashed, protocol.ProcessClosed, protocol.ProcessFatal, protocol.ProcessHostDown:
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

// observeMember updates metrics from a member's own event; a broker's
// (the consumer-group coordinator's member states) has no slot.
func (w *watcher) observeMember(e *TraceEvent) {
	i, ok := e.Member()
	if !ok {
		return
	}
	s := w.slots[i]
	g := w.groups[s.group]
	m := g.m
	switch e.Kind {
	case protocol.EvAssigned:
		if e.At >= m.from {
			m.clientRebalances++
		}
		w.setOwned(s, e.Partitions)
		w.settle(s, e.Gen)
	case protocol.EvRevoked:
		// Partitions lists what was given up; keep the rest.
		kept := slices.DeleteFunc(slices.Clone(s.owned), func(tp protocol.TopicPartition) bool {
			return slices.Contains(e.Partitions, tp)
		})
		w.setOwned(s, kept)
	case protocol.EvMemberState:
		if e.MemberState != protocol.MemberStable && s.settledGen >= 0 {
			if s.settledGen == m.coordGen {
				m.settled--
			}
			s.settledGen = -1
		}
	case protocol.EvCoordinatorFound:
		// The client names its coordinator by broker id ("0"; model/classic/client brokerName).
		if id, err := strconv.Atoi(e.Peer); err == nil {
			s.coordSeen = int32(id)
		}
	case protocol.EvCoordinatorDead:
		// False when the broker the client used was in fact alive and still
		// the group's coordinator at that instant: not when a failover moved
		// the coordinator, nor when the broker's process or host was down.
		w.record(g, Observation{Kind: tracing.ObsDeadMark, At: e.At, Member: s.name, Process: s.inc,
			False: s.coordSeen < 0 || s.coordSeen == g.coord && !w.brokers[g.coord].down,
			Dead:  e.Dead, DeadErr: e.DeadErr, Broker: e.Peer, Gen: e.Gen})
		s.coordSeen = -1
	case protocol.EvLeave:
		// A leave after the heartbeat thread saw max.poll.interval.ms
		// expire is the poll-timeout trigger and, once the coordinator
		// removes the member, an eviction (classifyRemoval).
		s.lastLeave, s.leaveInc = e.Leave, s.inc
		if e.LeaveRequest == protocol.LeaveSent {
			m.lastLeavePoll = e.Leave == protocol.LeavePollTimeout
		}
	}
}

// settle records that the slot completed onJoinComplete at generation gen.
func (w *watcher) settle(s *slot, gen int32) {
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

func (w *watcher) observeCoordinator(e *TraceEvent) {
	g := w.groupByID(e.Group)
	if g == nil {
		return
	}
	if g.cs != nil && g.cs.active {
		w.observeConsumerCoordinator(g, e)
		return
	}
	m := g.m
	switch e.Kind {
	case protocol.EvRebalanceStart:
		// The coordinator emits it right after the state change that opened
		// the rebalance; name the trigger of a rebalance opened just now.
		m.trigger = e.Trigger
		if m.open && m.openStart == e.At {
			m.openTrig = triggerName(e.Trigger, g)
		}
	case protocol.EvGroupState:
		prev := m.coordState
		m.coordState = e.GroupState
		if e.GroupState == protocol.GroupStable {
			m.everStable = true
		}
		if e.Gen != 0 || e.GroupState == protocol.GroupStable {
			w.setCoordGen(g, e.Gen)
		}
		if e.GroupState == protocol.GroupPreparingRebalance && !m.open && (prev == protocol.GroupStable || prev == protocol.GroupEmpty ||
			prev == protocol.GroupCompletingRebalance || prev == protocol.GroupStateNone) {
			m.openEpisode(e.At, triggerName(m.trigger, g))
		}
		w.maybeCloseRebalance(g, e.At)
		w.maybeRecovered(g, e.At)
	case protocol.EvGenerationComplete:
		w.generationComplete(g, e)
	case protocol.EvMemberRemoved:
		w.classifyRemoval(g, e)
	}
}

// generationComplete notes a generation (classic) or group epoch (consumer
// protocol) the coordinator completed: the open episode counts it.
func (w *watcher) generationComplete(g *groupState, e *TraceEvent) {
	m := g.m
	w.setCoordGen(g, e.Gen)
	m.spanned(e.Gen)
	w.record(g, Observation{Kind: tracing.ObsGeneration, At: e.At, Gen: e.Gen})
}

// setCoordGen moves the coordinator's generation and recounts settled
// members (once per generation, so O(members) per rebalance).
func (w *watcher) setCoordGen(g *groupState, gen int32) {
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
	return m.coordState == protocol.GroupStable && !m.open && m.settled >= m.live
}

// maybeCloseRebalance ends the open rebalance once the coordinator is Stable
// and every live member is STABLE in its generation holding its assignment.
func (w *watcher) maybeCloseRebalance(g *groupState, now sim.Instant) {
	m := g.m
	if !m.open || m.coordState != protocol.GroupStable || m.settled < m.live {
		return
	}
	m.open = false
	w.closeEpisode(g, now, false)
}

// closeEpisode ends the open settle episode at now (incomplete: the run
// ended first) and records it.
func (w *watcher) closeEpisode(g *groupState, now sim.Instant, incomplete bool) {
	m := g.m
	r := m.episodeLog.close(now, m.coordGen, m.live, incomplete, m.from)
	w.record(g, Observation{Kind: tracing.ObsSettle, At: now, Gen: m.coordGen, Episode: &r})
}

// triggerName maps the coordinator's rebalance reason to INTERFACE.md's
// trigger vocabulary.
func triggerName(reason protocol.RebalanceReason, g *groupState) string {
	switch reason {
	case protocol.RebalanceJoin, protocol.RebalanceSessionExpired, protocol.RebalanceRebalanceTimeout,
		protocol.RebalanceCoordinatorFailover, protocol.RebalanceMetadata, protocol.RebalanceAppendError:
		return reason.String()
	case protocol.RebalanceLeave:
		if g.m.lastLeavePoll {
			return "poll-timeout"
		}
		return "leave"
	case protocol.RebalanceSyncTimeout:
		return "rebalance-timeout"
	}
	return "other"
}

// observeConsumerCoordinator is observeCoordinator for a consumer group
// (KIP-848), with the same figures: a generation is a target assignment
// (its epoch is the group epoch it was computed for); a rebalance opens at
// a group epoch bump and closes once the group is Stable (every member at
// the target's epoch, nothing left to revoke or assign) and every live
// member is STABLE at that epoch.
func (w *watcher) observeConsumerCoordinator(g *groupState, e *TraceEvent) {
	m := g.m
	switch e.Kind {
	case protocol.EvRebalanceStart:
		m.trigger = e.Trigger
		if !m.open {
			m.openEpisode(e.At, consumerTrigger(e.Trigger, g))
		}
	case protocol.EvGroupState:
		m.coordState = e.GroupState
		if e.GroupState == protocol.GroupStable {
			m.everStable = true
		}
		w.maybeCloseRebalance(g, e.At)
		w.maybeRecovered(g, e.At)
	case protocol.EvGenerationComplete:
		w.generationComplete(g, e)
		w.maybeCloseRebalance(g, e.At)
	case protocol.EvMemberRemoved:
		w.classifyRemoval(g, e)
	}
}

// consumerTrigger names a group epoch bump's reason in INTERFACE.md's
// trigger vocabulary: a new member's subscription is a join.
func consumerTrigger(reason protocol.RebalanceReason, g *groupState) string {
	if reason == protocol.RebalanceSubscription {
		return "join"
	}
	return triggerName(reason, g)
}
