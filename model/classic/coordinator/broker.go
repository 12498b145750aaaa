package coordinator

import (
	"fmt"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Rebalance triggers (EvRebalanceStart.Reason).
const (
	reasonJoin        = "join"
	reasonLeave       = "leave"
	reasonSession     = "session-expired"
	reasonSyncTimeout = "sync-timeout"
	reasonMetadata    = "metadata"
	reasonFailover    = "coordinator-failover"
)

// Member removal reasons (EvMemberRemoved.Removal; Reason is their text).
const (
	removedSession   = protocol.RemovalSessionExpired
	removedLeave     = protocol.RemovalLeave
	removedRebalance = protocol.RemovalRebalanceTimeout
	removedSync      = protocol.RemovalSyncTimeout
	removedNewMember = protocol.RemovalNewMemberTimeout
	removedMaxSize   = protocol.RemovalMaxSize
	removedFenced    = protocol.RemovalFenced
)

// removedEvent is the EvMemberRemoved event of member id removed for r.
func removedEvent(group, id string, r protocol.RemovalReason) protocol.Event {
	return protocol.Event{Kind: protocol.EvMemberRemoved, Group: group, Peer: id, Reason: r.String(), Removal: r}
}

// partState is the state of the __consumer_offsets partition that holds a
// group, as this broker sees it.
type partState uint8

const (
	partNotOwned partState = iota // never elected, or resigned
	partLoading                   // onElection: loadGroupsAndOffsets running
	partOwned                     // loaded: this broker is the coordinator
)

// partition models one group's __consumer_offsets partition on this broker.
// Deviation: Kafka maps many groups to one of 50 partitions
// (abs(groupId.hashCode) % 50) and loads/unloads them together; here each
// group has its own partition, so a failover moves exactly one group.
type partition struct {
	groupID  string
	state    partState
	group    *group // nil when no group exists (or not loaded)
	load     timer
	rec      *GroupRecord // what loading will restore
	failover bool         // this election is a failover (see Elect)
}

// Broker is one broker's classic group coordinator (GroupCoordinator.scala
// with the parts of GroupMetadataManager it needs) hosting any number of
// groups. It is a pure state machine: requests come in through Handle,
// timers fire in Tick, and everything it produces goes into an Output.
type Broker struct {
	cfg  Config
	feat features

	parts map[string]*partition // lookup only; never iterated
	// lastPart is the partition groupFor found last: almost every request
	// is for the same group, and a partition, once in parts, stays its
	// group's (never removed or replaced), so it is looked up by id
	// without hashing (the map's hash was 0.5 % of the instructions of a
	// 100-member hour, cachegrind).
	lastPart     *partition
	coordinators map[string]int32 // FindCoordinator metadata (lookup only)

	timers   timerHeap
	timerSeq uint64
	idSeq    uint64 // member id sequence

	// byConn is the member whose request last passed on each connection
	// (connMember's cache; indexed by Conn).
	byConn []*member

	// configs are the member configurations made last (config): a member
	// that joins with the timeouts and protocol list of one of them shares
	// it.
	configs []*MemberConfig

	hbResp [4]protocol.HeartbeatResponse // shared heartbeat responses (see heartbeatResponse)
	ocOK   protocol.OffsetCommitResponse // the shared NONE OffsetCommit response (see handleOffsetCommit)
}

// NewBroker returns a broker with no groups. It panics if cfg does not
// pass Validate (the CLI and the harness validate first).
func NewBroker(cfg Config) *Broker {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	f, _ := cfg.Profile.features()
	b := &Broker{
		cfg:          cfg,
		feat:         f,
		parts:        map[string]*partition{},
		coordinators: map[string]int32{},
	}
	b.hbResp[0].Error = protocol.None
	b.hbResp[1].Error = protocol.RebalanceInProgress
	b.hbResp[2].Error = protocol.IllegalGeneration
	b.hbResp[3].Error = protocol.UnknownMemberID
	return b
}

// SetCoordinator records which broker leads the group's offsets partition,
// as this broker's metadata cache knows it (used to answer
// FindCoordinator). brokerID -1: no leader (COORDINATOR_NOT_AVAILABLE).
func (b *Broker) SetCoordinator(groupID string, brokerID int32) {
	b.coordinators[groupID] = brokerID
}

// Handle processes one request received on conn with correlation id corr.
// Immediate answers and answers to parked requests that this request
// completes are appended to out.Replies in order. Timers that expired
// strictly before now fire first (a timer due exactly at now is left to the
// harness's ordering of the Tick call).
func (b *Broker) Handle(now protocol.Instant, conn Conn, corr uint64, req protocol.Request, out *Output) {
	b.fireTimers(now, false, out)
	switch r := req.(type) {
	case *protocol.FindCoordinatorRequest:
		b.handleFindCoordinator(conn, corr, r, out)
	case *protocol.JoinGroupRequest:
		b.handleJoinGroup(now, conn, corr, r, out)
	case *protocol.SyncGroupRequest:
		b.handleSyncGroup(now, conn, corr, r, out)
	case *protocol.HeartbeatRequest:
		b.handleHeartbeat(now, conn, corr, r, out)
	case *protocol.LeaveGroupRequest:
		b.handleLeaveGroup(now, conn, corr, r, out)
	case *protocol.OffsetCommitRequest:
		b.handleOffsetCommit(now, conn, corr, r, out)
	default:
		panic(fmt.Sprintf("coordinator: Handle: unknown request %T", req))
	}
}

// handleFindCoordinator mirrors KafkaApis.handleFindCoordinatorRequest for
// key type GROUP: the answer comes from this broker's metadata (the leader
// of the group's offsets partition), not from whether this broker hosts it.
func (b *Broker) handleFindCoordinator(conn Conn, corr uint64, r *protocol.FindCoordinatorRequest, out *Output) {
	id, ok := b.coordinators[r.Key]
	if !ok || id < 0 {
		b.reply(out, conn, corr, &protocol.FindCoordinatorResponse{Error: protocol.CoordinatorNotAvailable, NodeID: -1})
		return
	}
	b.reply(out, conn, corr, &protocol.FindCoordinatorResponse{Error: protocol.None, NodeID: id})
}

// Tick fires every timer due at or before now. Safe to call early.
func (b *Broker) Tick(now protocol.Instant, out *Output) {
	b.fireTimers(now, true, out)
}

// fireTimers pops and fires expired timers in (deadline, arming order).
func (b *Broker) fireTimers(now protocol.Instant, inclusive bool, out *Output) {
	// Bound: a timer fired here can arm another at <= now only through the
	// InitialDelayedJoin chain (delay 0) and the DelayedJoin re-armed when
	// only un-rejoined static members remain (rebalance timeout 0); both are
	// finite, the bound catches a bug that would loop.
	for fired := 0; b.timers.len() > 0; fired++ {
		if at := b.timers.h[0].at; at > now || (!inclusive && at == now) {
			return
		}
		t := b.timers.top()
		check(fired < 1<<24, "fireTimers: runaway timer loop")
		b.timers.remove(0)
		switch t.kind {
		case tkHeartbeat:
			b.onExpireHeartbeat(t.at, t.g, t.who.(*member), out)
		case tkPending:
			b.onExpirePendingMember(t.at, t.g, t.who.(*pendingMember), out)
		case tkJoin:
			b.onCompleteJoinTimer(t.at, t.g, out)
		case tkSync:
			b.onExpirePendingSync(t.at, t.g, out)
		case tkLoad:
			b.onGroupLoaded(t.at, t.who.(*partition), out)
		case tkAppend:
			b.onAppendTimer(t.at, t, out)
		case tkLinger:
			b.onFlush(t.g, out)
		}
	}
}

// NextDeadline returns the earliest armed timer, or protocol.Never.
func (b *Broker) NextDeadline() protocol.Instant {
	if b.timers.len() == 0 {
		return protocol.Never
	}
	return b.timers.h[0].at
}

// GroupState returns the group's state and generation on this broker; ok is
// false if this broker holds no group object for it. An unloaded group
// reports Dead until the broker is elected for it again.
func (b *Broker) GroupState(groupID string) (state GroupState, generation int32, ok bool) {
	p, found := b.parts[groupID]
	if !found || p.group == nil {
		return Dead, 0, false
	}
	return p.group.state, p.group.generation, true
}

// Members returns the group's member ids, sorted (nil if no group).
func (b *Broker) Members(groupID string) []string {
	p, found := b.parts[groupID]
	if !found || p.group == nil {
		return nil
	}
	ids := make([]string, len(p.group.members))
	for i, m := range p.group.members {
		ids[i] = m.id
	}
	slices.Sort(ids)
	return ids
}

// Leader returns the group's leader member id ("" if none).
func (b *Broker) Leader(groupID string) string {
	p, found := b.parts[groupID]
	if !found || p.group == nil {
		return ""
	}
	return p.group.leader
}

// Elect models GroupCoordinator.onElection for the group's offsets
// partition: the partition loads for loadTime (requests meanwhile get the
// loading error, mapped per API, §12.3), then the group appears from rec
// (Stable or Empty; nil = no group) with every member's session expiry
// restarted at load completion (GroupMetadataManager.loadGroupsAndOffsets,
// GroupCoordinator.onGroupLoaded). loadTime 0 loads within this call.
//
// Failover attribution: an election is a failover unless it is the initial
// placement (now == 0, loadTime == 0, rec == nil). After a failover, the
// first member-driven rebalance (join / metadata) before every member has
// resynchronised is reported with reason "coordinator-failover".
func (b *Broker) Elect(now protocol.Instant, groupID string, loadTime time.Duration, rec *GroupRecord, out *Output) {
	check(loadTime >= 0, "Elect: negative load time")
	p := b.parts[groupID]
	if p == nil {
		p = &partition{groupID: groupID}
		p.load = timer{id: -1, kind: tkLoad, who: p}
		b.parts[groupID] = p
	}
	if p.state == partOwned || p.state == partLoading {
		// Re-election without resignation: unload what we have first.
		b.Resign(now, groupID, out)
	}
	p.state = partLoading
	p.group = nil
	p.rec = nil
	if rec != nil {
		c := *rec
		p.rec = &c
	}
	p.failover = !(now == 0 && loadTime == 0 && rec == nil)
	if loadTime == 0 {
		b.onGroupLoaded(now, p, out)
		return
	}
	b.schedule(&p.load, now.Add(loadTime))
}

// Resign models GroupCoordinator.onResignation → GroupMetadataManager
// removeGroupsForPartition → onGroupUnloaded: the group becomes Dead,
// parked JoinGroups and SyncGroups are answered NOT_COORDINATOR, every
// timer of the group is cancelled, and later requests for the group get
// NOT_COORDINATOR. A no-op if this broker does not own the group.
func (b *Broker) Resign(_ protocol.Instant, groupID string, out *Output) {
	p := b.parts[groupID]
	if p == nil || p.state == partNotOwned {
		return
	}
	b.cancel(&p.load)
	p.state = partNotOwned
	p.rec = nil
	g := p.group
	if g == nil {
		return
	}
	prev := g.state
	b.becomeDead(g, out)
	switch prev {
	case Empty, Dead:
	case PreparingRebalance:
		for _, m := range g.members {
			b.maybeInvokeJoinCallback(m, &protocol.JoinGroupResponse{
				Error: protocol.NotCoordinator, GenerationID: protocol.NoGeneration, MemberID: m.id}, out)
		}
	case CompletingRebalance, Stable:
		for _, m := range g.members {
			b.maybeInvokeSyncCallback(m, &protocol.SyncGroupResponse{Error: protocol.NotCoordinator}, out)
		}
	}
	b.stopGroup(g, out)
}

// stopGroup cancels every timer of a group that leaves this coordinator
// (members' heartbeats, pending members, the join and sync deadlines) and
// drops its outstanding appends.
func (b *Broker) stopGroup(g *group, out *Output) {
	for _, m := range g.members {
		b.cancel(&m.hb)
	}
	for _, pm := range g.pending {
		b.cancel(&pm.timer)
	}
	b.cancel(&g.join)
	g.joinKind = joinNone
	b.cancel(&g.sync)
	b.dropBatch(g, out)
	b.dropAppends(g, out)
}

// groupFromRecord rebuilds a group and its members from a group record
// (GroupMetadataManager.loadGroup; also the downgrade's createClassicGroupRecords
// read back). The first member added is the leader.
func groupFromRecord(id string, p *partition, rec *GroupRecord) *group {
	g := newGroup(id, p)
	g.generation = rec.GenerationID
	g.protocolType = rec.ProtocolType
	g.protocolName = rec.ProtocolName
	// The loaded members' configurations, copied once per distinct one of
	// the record (shared as they were).
	cfgs := map[*MemberConfig]*MemberConfig{}
	for i := range rec.Members {
		mr := &rec.Members[i]
		c := cfgs[mr.MemberConfig]
		if c == nil {
			c = &MemberConfig{GroupInstanceID: mr.GroupInstanceID, SessionTimeout: mr.SessionTimeout, RebalanceTimeout: mr.RebalanceTimeout,
				Protocols: slices.Clone(mr.Protocols)}
			cfgs[mr.MemberConfig] = c
		}
		m := &member{
			id:         mr.MemberID,
			cfg:        c,
			assignment: mr.Assignment,
		}
		m.hb = timer{id: -1, kind: tkHeartbeat, g: g, who: m}
		g.add(m, rec.ProtocolType)
	}
	return g
}

// onGroupLoaded mirrors GroupCoordinator.onGroupLoaded after
// loadGroupsAndOffsets rebuilt the group from its last record.
func (b *Broker) onGroupLoaded(now protocol.Instant, p *partition, out *Output) {
	check(p.state == partLoading, "onGroupLoaded: partition not loading")
	p.state = partOwned
	rec := p.rec
	p.rec = nil
	if rec == nil {
		return
	}
	g := groupFromRecord(p.groupID, p, rec)
	// add() made the first member leader; restore the persisted leader.
	if rec.Leader != "" && g.has(rec.Leader) {
		g.leader = rec.Leader
	}
	p.group = g
	if len(g.members) > 0 {
		g.state = Stable
		check(rec.ProtocolName != "", "onGroupLoaded: Stable group without protocol")
	}
	b.emitState(g, "", out)
	if p.failover && len(g.members) > 0 {
		g.failover.pending = true
		g.failover.unsynced = len(g.members)
	}
	// groupIsOverCapacity → prepareRebalance.
	if b.feat.maxSize && len(g.members) > b.cfg.MaxSize {
		b.prepareRebalance(now, g, reasonFailover, out)
	}
	for _, m := range g.members {
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
	}
}

// groupFor mirrors validateGroupStatus (the loading, ownership and group-id
// checks, §12.3). It returns the partition, or the error to answer.
func (b *Broker) groupFor(groupID string, api protocol.APIKey) (*partition, protocol.ErrorCode) {
	// isValidGroupId: OffsetCommit accepts an empty (non-null) id.
	if groupID == "" && api != protocol.APIOffsetCommit {
		return nil, protocol.InvalidGroupID
	}
	// Not modelled: the coordinator is always started (isActive), so
	// COORDINATOR_NOT_AVAILABLE from this check never happens.
	p := b.lastPart
	if p == nil || p.groupID != groupID {
		p = b.parts[groupID]
		if p == nil {
			return nil, protocol.NotCoordinator
		}
		b.lastPart = p
	}
	switch p.state {
	case partLoading:
		if b.feat.loadingNotOwned {
			// Before 2.0.0 a loading partition is not owned yet
			// (features.loadingNotOwned).
			return nil, protocol.NotCoordinator
		}
		return nil, protocol.CoordinatorLoadInProgress
	case partNotOwned:
		return nil, protocol.NotCoordinator
	case partOwned:
	}
	return p, protocol.None
}

// reply appends an immediate or deferred response.
func (b *Broker) reply(out *Output, conn Conn, corr uint64, resp protocol.Response) {
	out.Replies = append(out.Replies, Reply{Conn: conn, Corr: corr, Resp: resp})
}

func (b *Broker) emit(out *Output, ev protocol.Event) {
	ev.Node = b.cfg.Name
	out.Events = append(out.Events, ev)
}

// emitState records a group creation/load/transition (Detail = old state,
// "" for a group that just appeared).
func (b *Broker) emitState(g *group, old string, out *Output) {
	b.emit(out, protocol.Event{Kind: protocol.EvGroupState, Group: g.id, State: g.state.String(),
		Detail: old, Gen: g.generation})
}

// transitionTo mirrors GroupMetadata.transitionTo: the only place the
// state changes; an illegal transition panics.
func (b *Broker) transitionTo(g *group, to GroupState, out *Output) {
	if !validPreviousState(g.state, to) {
		panic(fmt.Sprintf("coordinator: group %s: illegal transition %s -> %s", g.id, g.state, to))
	}
	old := g.state
	g.state = to
	b.emitState(g, old.String(), out)
}

func (b *Broker) becomePreparingRebalance(g *group, out *Output) {
	b.transitionTo(g, PreparingRebalance, out)
}

func (b *Broker) becomeCompletingRebalance(g *group, out *Output) {
	b.transitionTo(g, CompletingRebalance, out)
}

func (b *Broker) becomeStable(g *group, out *Output) { b.transitionTo(g, Stable, out) }

func (b *Broker) becomeEmpty(g *group, out *Output) { b.transitionTo(g, Empty, out) }

func (b *Broker) becomeDead(g *group, out *Output) { b.transitionTo(g, Dead, out) }

// newMemberID mirrors GroupMetadata.generateMemberId. Deviation: Kafka
// appends a random UUID; here "<client.id or group.instance.id>-<broker
// id>-<sequence>", unique per broker and so within a group across
// failovers, and deterministic.
func (b *Broker) newMemberID(clientID, instanceID string) string {
	b.idSeq++
	prefix := clientID
	if instanceID != "" {
		prefix = instanceID
	}
	return fmt.Sprintf("%s-%d-%d", prefix, b.cfg.BrokerID, b.idSeq)
}

// ContinueMemberIDs makes a restarted broker go on from the member-id
// sequence of its previous incarnation: Kafka's ids end in a random UUID
// and never repeat; the deterministic ids here must not repeat either, or a
// group reloaded from a record that names an id of the old incarnation
// would get that id a second time.
func (b *Broker) ContinueMemberIDs(prev *Broker) {
	if prev != nil && prev.idSeq > b.idSeq {
		b.idSeq = prev.idSeq
	}
}

// persist records a group record whose append completed successfully
// (storeGroup's putCacheCallback with NONE; see append.go).
func (b *Broker) persist(g *group, rec GroupRecord, out *Output) {
	out.Persist = append(out.Persist, rec)
	b.emit(out, protocol.Event{Kind: protocol.EvGroupPersisted, Group: g.id, Gen: rec.GenerationID,
		Count: int32(len(rec.Members))})
}

// markResynced notes that a member has talked to this coordinator after a
// failover load (trace attribution only).
func (g *group) markResynced(m *member) {
	if !g.failover.pending || m.resynced {
		return
	}
	m.resynced = true
	g.failover.unsynced--
	if g.failover.unsynced == 0 {
		g.failover.pending = false
	}
}
