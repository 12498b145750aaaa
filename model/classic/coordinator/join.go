package coordinator

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// handleJoinGroup mirrors GroupCoordinator.handleJoinGroup (3.6.1, §12.4).
func (b *Broker) handleJoinGroup(now protocol.Instant, conn Conn, corr uint64, r *protocol.JoinGroupRequest, out *Output) {
	p, errc := b.groupFor(r.GroupID, protocol.APIJoinGroup)
	if errc != protocol.None {
		// JoinGroup keeps the loading error as is (§12.3).
		b.joinError(out, conn, corr, r.MemberID, errc)
		return
	}
	if b.feat.javaClassic && r.Version < 2 {
		// KIP-896 (4.0, KAFKA-18269): JoinGroup validVersions 2-9.
		b.joinError(out, conn, corr, r.MemberID, protocol.UnsupportedVersion)
		return
	}
	if r.GroupInstanceID != "" && !b.feat.static {
		// KafkaApis (2.3+): a JoinGroup with an instance id to a broker
		// without KIP-345 (IBP < 2.3) is UNSUPPORTED_VERSION. Older brokers
		// could not even parse it; the answer is the same for the client.
		b.joinError(out, conn, corr, r.MemberID, protocol.UnsupportedVersion)
		return
	}
	sessionTimeout := r.SessionTimeout
	rebalanceTimeout := r.RebalanceTimeout
	if r.Version == 0 {
		// JoinGroup v0 has no rebalance timeout: the broker uses the
		// session timeout (KafkaApis.handleJoinGroupRequest).
		rebalanceTimeout = sessionTimeout
		if b.feat.kafka8653V0RebalanceTimeoutZero {
			// 2.3.0 (KAFKA-8653): the field's default -1 is used; the
			// DelayedJoin of a -1 timeout expires at once, as 0 does here.
			rebalanceTimeout = 0
		}
	}
	if sessionTimeout < b.cfg.MinSessionTimeout || sessionTimeout > b.cfg.MaxSessionTimeout {
		b.joinError(out, conn, corr, r.MemberID, protocol.InvalidSessionTimeout)
		return
	}
	isUnknownMember := r.MemberID == protocol.UnknownMemberIDValue
	g := p.group
	if g == nil {
		// getOrMaybeCreateGroup(groupId, createIfNotExist = isUnknownMember).
		if !isUnknownMember {
			b.joinError(out, conn, corr, r.MemberID, protocol.UnknownMemberID)
			return
		}
		g = newGroup(r.GroupID, p)
		p.group = g
		b.emitState(g, "", out)
	}
	if !b.acceptJoiningMember(g, r.MemberID, isUnknownMember) {
		if m, ok := g.byID[r.MemberID]; ok {
			// group.remove(memberId): a plain removal, no rebalance; the
			// member's parked JoinGroup (if any) is never answered.
			b.cancel(&m.hb)
			g.remove(m.id)
			b.emit(out, removedEvent(g.id, m.id, removedMaxSize))
		}
		if b.feat.removeDropsPending {
			// 3.0+: GroupMetadata.remove also drops a KIP-394 pending id
			// (3.6.1 GroupMetadata.scala 265-279), so the join can
			// complete below; before, it stays until its expiry.
			if pm := g.removePending(r.MemberID); pm != nil {
				b.cancel(&pm.timer)
			}
		}
		if b.feat.rejectRemovesStatic && r.GroupInstanceID != "" {
			// 2.3–2.7: group.removeStaticMember(groupInstanceId) drops the
			// instance id's mapping even when it belongs to another
			// (current) member, which then no longer counts as static.
			delete(g.static, r.GroupInstanceID)
		}
		b.joinError(out, conn, corr, protocol.UnknownMemberIDValue, protocol.GroupMaxSizeReached)
		if b.feat.javaClassic {
			// classicGroupJoinToClassicGroup (v8.0.0 GroupMetadataManager
			// 4475-4480): no completion attempt after a rejection.
			return
		}
	} else {
		jr := joinReq{conn: conn, corr: corr, r: r, session: sessionTimeout, rebalance: rebalanceTimeout}
		if isUnknownMember {
			b.doNewMemberJoinGroup(now, g, &jr, out)
		} else {
			b.doCurrentMemberJoinGroup(now, g, &jr, out)
		}
	}
	if g.state == PreparingRebalance {
		b.tryCompleteJoin(now, g, out)
	}
}

// joinReq is one JoinGroup with its effective timeouts.
type joinReq struct {
	conn      Conn
	corr      uint64
	r         *protocol.JoinGroupRequest
	session   time.Duration
	rebalance time.Duration
}

func (b *Broker) joinError(out *Output, conn Conn, corr uint64, memberID string, errc protocol.ErrorCode) {
	b.reply(out, conn, corr, &protocol.JoinGroupResponse{Error: errc, GenerationID: protocol.NoGeneration, MemberID: memberID})
}

// acceptJoiningMember mirrors GroupCoordinator.acceptJoiningMember (2.6+)
// and, for 2.2–2.5 profiles, the older inline capacity test. Profiles
// without KIP-389 accept everyone.
func (b *Broker) acceptJoiningMember(g *group, memberID string, isUnknownMember bool) bool {
	if !b.feat.maxSize {
		return true
	}
	m, has := g.byID[memberID]
	if !b.feat.acceptJoining26 {
		// 2.2–2.5 (GroupCoordinator.handleJoinGroup 2.5.0 161-163): reject
		// if the group is over capacity and the member is not awaiting
		// join, or if the member id is unknown and the group is full. The
		// second JoinGroup of KIP-394 carries its pending id, so it is
		// never capped.
		over := len(g.members) > b.cfg.MaxSize
		if has && over && !m.awaitingJoin {
			return false
		}
		if isUnknownMember && len(g.members) >= b.cfg.MaxSize {
			return false
		}
		return true
	}
	switch g.state {
	case Empty, Dead:
		return true
	case PreparingRebalance:
		return (has && m.awaitingJoin) || g.numAwaitingJoin < b.cfg.MaxSize
	case CompletingRebalance, Stable:
		return has || len(g.members) < b.cfg.MaxSize
	}
	return false
}

// joinRefused answers the JoinGroup with the error both
// GroupCoordinator.doNewMemberJoinGroup and doCurrentMemberJoinGroup check
// first, in their order: COORDINATOR_NOT_AVAILABLE for a Dead group,
// INCONSISTENT_GROUP_PROTOCOL when the group does not support the member's
// protocols (group.supportsProtocols); it reports whether it answered.
func (b *Broker) joinRefused(g *group, jr *joinReq, out *Output) bool {
	r := jr.r
	switch {
	case g.state == Dead:
		b.joinError(out, jr.conn, jr.corr, r.MemberID, protocol.CoordinatorNotAvailable)
	case !g.supportsProtocols(r.ProtocolType, r.Protocols):
		b.joinError(out, jr.conn, jr.corr, r.MemberID, protocol.InconsistentGroupProtocol)
	default:
		return false
	}
	return true
}

// doNewMemberJoinGroup mirrors GroupCoordinator.doNewMemberJoinGroup.
func (b *Broker) doNewMemberJoinGroup(now protocol.Instant, g *group, jr *joinReq, out *Output) {
	r := jr.r
	if b.joinRefused(g, jr, out) {
		return
	}
	newID := b.newMemberID(r.ClientID, r.GroupInstanceID)
	if r.GroupInstanceID != "" {
		// doStaticNewMemberJoinGroup.
		if old, ok := g.static[r.GroupInstanceID]; ok {
			b.updateStaticMemberAndRebalance(now, g, old, newID, jr, out)
			return
		}
		b.addMemberAndRebalance(now, g, newID, jr, out)
		return
	}
	// doDynamicNewMemberJoinGroup: KIP-394 (requireKnownMemberId = v4+).
	if b.feat.kip394 && r.Version >= 4 {
		pm := &pendingMember{id: newID}
		pm.timer = timer{id: -1, kind: tkPending, g: g, who: pm}
		g.addPending(pm)
		// addPendingMemberExpiration: the request's session timeout.
		b.schedule(&pm.timer, now.Add(jr.session))
		b.joinError(out, jr.conn, jr.corr, newID, protocol.MemberIDRequired)
		return
	}
	b.addMemberAndRebalance(now, g, newID, jr, out)
}

// doCurrentMemberJoinGroup mirrors GroupCoordinator.doCurrentMemberJoinGroup.
func (b *Broker) doCurrentMemberJoinGroup(now protocol.Instant, g *group, jr *joinReq, out *Output) {
	r := jr.r
	if b.joinRefused(g, jr, out) {
		return
	}
	if _, pending := g.pendingByID[r.MemberID]; pending {
		// Second JoinGroup of KIP-394. Kafka throws IllegalStateException
		// if it carries an instance id (static members never get a pending
		// id); here that request is answered UNKNOWN_SERVER_ERROR.
		if r.GroupInstanceID != "" {
			b.joinError(out, jr.conn, jr.corr, r.MemberID, protocol.UnknownServerError)
			return
		}
		b.addMemberAndRebalance(now, g, r.MemberID, jr, out)
		return
	}
	if errc := b.validateCurrentMember(g, r.MemberID, r.GroupInstanceID); errc != protocol.None {
		b.joinError(out, jr.conn, jr.corr, r.MemberID, errc)
		return
	}
	m := g.byID[r.MemberID]
	switch g.state {
	case PreparingRebalance:
		b.updateMemberAndRebalance(now, g, m, jr, reasonMetadata, out)
	case CompletingRebalance:
		if m.matches(r.Protocols) {
			// A resend of a lost JoinGroup response: answer with the
			// current generation.
			b.reply(out, jr.conn, jr.corr, b.joinResult(g, m, g.leader, g.leader == m.id, false))
			return
		}
		b.updateMemberAndRebalance(now, g, m, jr, reasonMetadata, out)
	case Stable:
		if g.leader == m.id || !m.matches(r.Protocols) {
			// The leader's rejoin (e.g. metadata change seen by the leader)
			// or a follower with changed metadata forces a rebalance.
			b.updateMemberAndRebalance(now, g, m, jr, reasonMetadata, out)
			return
		}
		b.reply(out, jr.conn, jr.corr, b.joinResult(g, m, g.leader, false, false))
	case Empty, Dead:
		b.joinError(out, jr.conn, jr.corr, r.MemberID, protocol.UnknownMemberID)
	}
}

// validateCurrentMember mirrors GroupCoordinator.validateCurrentMember
// (3.0+; the same checks inline in 2.3–2.8).
func (b *Broker) validateCurrentMember(g *group, memberID, instanceID string) protocol.ErrorCode {
	_, errc := b.currentMember(g, memberID, instanceID)
	return errc
}

// currentMember is validateCurrentMember that also returns the member when
// the answer is NONE: the heartbeat and commit paths look the id up once.
func (b *Broker) currentMember(g *group, memberID, instanceID string) (*member, protocol.ErrorCode) {
	if instanceID != "" && b.feat.static {
		cur, ok := g.static[instanceID]
		if !ok {
			return nil, protocol.UnknownMemberID
		}
		if cur.id != memberID {
			return nil, protocol.FencedInstanceID
		}
	}
	m, ok := g.byID[memberID]
	if !ok {
		return nil, protocol.UnknownMemberID
	}
	return m, protocol.None
}

// connMember is currentMember for a request that arrived on conn, with a
// one-entry cache per connection (not Kafka: a lookup shortcut with the same
// answers). A member sends its Heartbeat and OffsetCommit requests on one
// connection, so the member that last passed on conn is checked first: it is
// the answer when it is still in g (not gone: group.add and group.remove keep
// the flag, and g.byID[m.id] == m exactly when m is in g) under the same id.
// Static members (KIP-345, whose instance id is checked first) always take
// the map path. In a 10,000-member group this skips hashing the member id
// and the map's random memory access on every heartbeat and commit.
func (b *Broker) connMember(g *group, conn Conn, memberID, instanceID string) (*member, protocol.ErrorCode) {
	if instanceID == "" && conn >= 0 && int(conn) < len(b.byConn) {
		if m := b.byConn[conn]; m != nil && !m.gone && m.hb.g == g && m.id == memberID {
			return m, protocol.None
		}
	}
	m, errc := b.currentMember(g, memberID, instanceID)
	if errc == protocol.None && conn >= 0 {
		if int(conn) >= len(b.byConn) {
			b.byConn = append(b.byConn, make([]*member, int(conn)+1-len(b.byConn))...)
		}
		b.byConn[conn] = m
	}
	return m, errc
}

// joinResult builds a successful JoinGroup response for m.
func (b *Broker) joinResult(g *group, m *member, leader string, withMembers, skip bool) *protocol.JoinGroupResponse {
	resp := &protocol.JoinGroupResponse{
		Error:          protocol.None,
		GenerationID:   g.generation,
		ProtocolType:   g.protocolType,
		ProtocolName:   g.protocolName,
		Leader:         leader,
		MemberID:       m.id,
		SkipAssignment: skip,
	}
	if withMembers {
		resp.Members = g.currentMemberMetadata()
	}
	return resp
}

// addMemberAndRebalance mirrors GroupCoordinator.addMemberAndRebalance.
func (b *Broker) addMemberAndRebalance(now protocol.Instant, g *group, memberID string, jr *joinReq, out *Output) {
	r := jr.r
	m := &member{
		id:          memberID,
		clientIDLen: int32(len(r.ClientID)),
		cfg:         b.config(r.GroupInstanceID, jr.session, jr.rebalance, r.Protocols),
		// Without the new-member timeout (≤2.1) there is no isNew: a
		// parked new member counts as alive like any other.
		isNew:        b.feat.newMemberTimeout,
		resynced:     true,
		awaitingJoin: true,
		joinConn:     jr.conn,
		joinCorr:     jr.corr,
		joinVersion:  r.Version,
	}
	m.hb = timer{id: -1, kind: tkHeartbeat, g: g, who: m}
	if g.state == PreparingRebalance && (g.generation == 0 || (b.feat.javaClassic && g.joinKind == joinInitial)) {
		// Scala: generationId == 0; Java: previousState() == EMPTY, i.e. any
		// rebalance started from Empty (the only one with an initial delay).
		g.newMemberAdded = true
	}
	if pm := g.pendingByID[memberID]; pm != nil {
		// The pending expiry completes once the id is a member
		// (tryCompleteHeartbeat(isPending) sees group.has(memberId)).
		b.cancel(&pm.timer)
	}
	g.add(m, r.ProtocolType)
	b.emit(out, protocol.Event{Kind: protocol.EvMemberAdded, Group: g.id, Peer: m.id, Detail: r.ClientID})
	// The 5-minute cap on a new member's parked JoinGroup (KAFKA-7610,
	// 2.2+). Before 2.2 addMemberAndRebalance arms no expiry (0.11.0.0
	// GroupCoordinator.scala 634-653): the parked member is never expired,
	// its first expiry is armed by onCompleteJoin.
	if b.feat.newMemberTimeout {
		b.completeAndScheduleNextExpiration(now, g, m, b.cfg.NewMemberJoinTimeout)
	}
	b.maybePrepareRebalance(now, g, b.memberReason(g, reasonJoin), out)
}

// updateMemberAndRebalance mirrors GroupCoordinator.updateMemberAndRebalance.
func (b *Broker) updateMemberAndRebalance(now protocol.Instant, g *group, m *member, jr *joinReq, reason string, out *Output) {
	b.updateMember(g, m, jr)
	b.maybePrepareRebalance(now, g, b.memberReason(g, reason), out)
}

// updateMember mirrors GroupMetadata.updateMember with a join callback.
// Deviation from nothing: if the member already had a parked JoinGroup,
// Kafka simply replaces the callback, so the older request is never
// answered (it stays parked, like any request on an abandoned connection).
func (b *Broker) updateMember(g *group, m *member, jr *joinReq) {
	session, rebalance := m.cfg.SessionTimeout, m.cfg.RebalanceTimeout
	if b.feat.updateTimeoutsOnRejoin {
		// KAFKA-14009 (3.3.2/3.4.0); before, updateMember kept the
		// member's first timeouts (GroupMetadata.scala 2.8.1 521-534).
		rebalance = jr.rebalance
		session = jr.session
	}
	g.setConfig(m, b.config(m.cfg.GroupInstanceID, session, rebalance, jr.r.Protocols))
	if !m.awaitingJoin {
		g.numAwaitingJoin++
	}
	m.awaitingJoin = true
	m.joinConn, m.joinCorr, m.joinVersion = jr.conn, jr.corr, jr.r.Version
	if jr.r.ClientID != "" {
		m.clientIDLen = int32(len(jr.r.ClientID))
	}
}

// memberReason attributes a member-driven rebalance to a failover while
// the group, loaded by a failover, still has members that have not
// resynchronised (see Elect).
func (b *Broker) memberReason(g *group, reason string) string {
	if g.failover.pending {
		return reasonFailover
	}
	return reason
}

// updateStaticMemberAndRebalance mirrors
// GroupCoordinator.updateStaticMemberAndRebalance (§13).
func (b *Broker) updateStaticMemberAndRebalance(now protocol.Instant, g *group, m *member, newID string, jr *joinReq, out *Output) {
	currentLeader := g.leader
	oldID, oldClientIDLen := m.id, m.clientIDLen
	oldConfig := m.cfg
	b.replaceStaticMember(g, m, newID, jr.r.ClientID, out)
	// The old id's heartbeat expiry is superseded by the new id's.
	b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
	b.updateMember(g, m, jr)
	switch g.state {
	case Stable:
		if !b.feat.staticStablePersist {
			// 2.3–2.6: answer at once with the current generation, old
			// leader id, nothing stored, no protocol check.
			b.maybeInvokeJoinCallback(m, b.joinResult(g, m, currentLeader, false, false), out)
			return
		}
		if g.protocolName != g.selectProtocol() {
			b.maybePrepareRebalance(now, g, b.memberReason(g, reasonJoin), out)
			return
		}
		// storeGroup with the current assignments; the callback
		// (onStaticMemberStored) answers the JoinGroup, or reverts the
		// replacement on an append error.
		b.storeGroup(now, g, &appendOp{kind: appendStatic, rec: g.record(nil), m: m, oldID: oldID, newID: newID,
			currentLeader: currentLeader, skipSupported: b.feat.skipAssignment && jr.r.Version >= 9,
			oldConfig: oldConfig, oldClientIDLen: oldClientIDLen,
			joinConn: jr.conn, joinCorr: jr.corr}, out)
	case CompletingRebalance:
		if b.feat.staticRebalanceInCompleting {
			// KAFKA-9801: the leader may already have the old id; rebalance.
			b.prepareRebalance(now, g, b.memberReason(g, reasonJoin), out)
			return
		}
		// 2.3–2.5: answered like Stable (KAFKA-9801 bug: the new id gets no
		// assignment from the pending SyncGroup).
		b.maybeInvokeJoinCallback(m, b.joinResult(g, m, currentLeader, false, false), out)
	case PreparingRebalance:
		// Nothing more: it counts as joined.
	case Empty, Dead:
		panic("coordinator: updateStaticMemberAndRebalance in " + g.state.String())
	}
}

// replaceStaticMember mirrors GroupMetadata.replaceStaticMember: the old
// id's parked JoinGroup/SyncGroup is fenced, the member object takes the
// new id, leadership and pending-sync follow it.
func (b *Broker) replaceStaticMember(g *group, m *member, newID, clientID string, out *Output) {
	oldID := m.id
	b.maybeInvokeJoinCallback(m, &protocol.JoinGroupResponse{Error: protocol.FencedInstanceID,
		GenerationID: protocol.NoGeneration, MemberID: oldID}, out)
	b.maybeInvokeSyncCallback(m, &protocol.SyncGroupResponse{Error: protocol.FencedInstanceID}, out)
	if m.pendingSync {
		// pendingSyncMembers holds the old id and nothing moves it
		// (GroupMetadata.replaceStaticMember 3.6.1 316-337): the new id
		// is not awaited, and the old one is never synced, so unless a
		// new generation starts first DelayedSync expires and rebalances
		// (onExpirePendingSync 1622-1634).
		m.pendingSync = false
		g.stalePendingSync++
	}
	delete(g.byID, oldID)
	m.id = newID
	g.byID[newID] = m
	if b.feat.javaClassic {
		// Java builds a new ClassicGroupMember, whose isNew is false
		// (ClassicGroup.replaceStaticMember v8.0.0 570-582, ClassicGroupMember
		// v8.0.0 120): a member restarting while its first JoinGroup is
		// parked is no longer new, and its parked JoinGroup keeps it alive.
		// Scala keeps the same MemberMetadata (isNew too): it expires at the
		// session timeout (GroupMetadata.replaceStaticMember 3.6.1 316-337).
		m.isNew = false
	}
	if g.leader == oldID {
		g.leader = newID
	}
	g.static[m.instanceID()] = m
	b.emit(out, removedEvent(g.id, oldID, removedFenced))
	b.emit(out, protocol.Event{Kind: protocol.EvMemberAdded, Group: g.id, Peer: newID, Detail: clientID})
	if clientID != "" {
		m.clientIDLen = int32(len(clientID))
	}
}

// maybePrepareRebalance mirrors GroupCoordinator.maybePrepareRebalance.
func (b *Broker) maybePrepareRebalance(now protocol.Instant, g *group, reason string, out *Output) {
	switch g.state {
	case Stable, CompletingRebalance, Empty:
		b.prepareRebalance(now, g, reason, out)
	case PreparingRebalance, Dead:
	}
}

// prepareRebalance mirrors GroupCoordinator.prepareRebalance (§12.5).
func (b *Broker) prepareRebalance(now protocol.Instant, g *group, reason string, out *Output) {
	if g.state == CompletingRebalance {
		b.resetAndPropagateAssignmentError(now, g, protocol.RebalanceInProgress, out)
	}
	// removeSyncExpiration (2.8.1+).
	b.cancel(&g.sync)
	fromEmpty := g.state == Empty
	b.becomePreparingRebalance(g, out)
	g.failover.pending = false
	b.emit(out, protocol.Event{Kind: protocol.EvRebalanceStart, Group: g.id, Reason: reason, Gen: g.generation,
		Count: int32(len(g.members))})
	rt := g.rebalanceTimeout()
	if fromEmpty && b.feat.initialDelay {
		// InitialDelayedJoin(delay = configured, remaining =
		// max(rebalanceTimeout - configured, 0)) (KIP-134).
		delay := b.cfg.InitialRebalanceDelay
		b.armJoin(now, g, joinInitial, delay, max(rt-delay, 0))
		return
	}
	// DelayedJoin(group.rebalanceTimeoutMs), fixed at creation; it may
	// complete at once (tryCompleteElseWatch), which the caller's
	// tryCompleteJoin or the one below does.
	b.armJoin(now, g, joinDelayed, rt, 0)
	b.tryCompleteJoin(now, g, out)
}

// armJoin arms the group's delayed join.
func (b *Broker) armJoin(now protocol.Instant, g *group, kind joinKind, delay, remaining time.Duration) {
	g.joinKind = kind
	g.joinDelay = delay
	g.joinRemaining = remaining
	b.schedule(&g.join, now.Add(delay))
}

// tryCompleteJoin mirrors rebalancePurgatory.checkAndComplete(GroupJoinKey)
// → DelayedJoin.tryComplete → GroupCoordinator.tryCompleteJoin. An
// InitialDelayedJoin never completes early (Scala).
func (b *Broker) tryCompleteJoin(now protocol.Instant, g *group, out *Output) {
	if g.joinKind != joinDelayed || g.state != PreparingRebalance {
		return
	}
	if g.hasAllMembersJoined() {
		b.cancel(&g.join)
		g.joinKind = joinNone
		b.onCompleteJoin(now, g, out)
	}
}

// onCompleteJoinTimer fires the group's delayed join: an expired
// DelayedJoin completes the join (forceComplete → onComplete); an
// InitialDelayedJoin either re-arms itself (KIP-134 extension) or
// completes it (InitialDelayedJoin.onComplete).
func (b *Broker) onCompleteJoinTimer(now protocol.Instant, g *group, out *Output) {
	kind := g.joinKind
	g.joinKind = joinNone
	switch kind {
	case joinInitial:
		if g.newMemberAdded && g.joinRemaining != 0 {
			g.newMemberAdded = false
			delay := min(b.cfg.InitialRebalanceDelay, g.joinRemaining)
			// Note: remaining minus the delay that just elapsed.
			remaining := max(g.joinRemaining-g.joinDelay, 0)
			b.armJoin(now, g, joinInitial, delay, remaining)
			return
		}
		b.onCompleteJoin(now, g, out)
	case joinDelayed:
		b.onCompleteJoin(now, g, out)
	case joinNone:
		panic("coordinator: join timer fired with no delayed join")
	}
}

// onCompleteJoin mirrors GroupCoordinator.onCompleteJoin (§12.6).
func (b *Broker) onCompleteJoin(now protocol.Instant, g *group, out *Output) {
	check(g.state == PreparingRebalance, "onCompleteJoin: group not PreparingRebalance")
	// Remove dynamic members that did not rejoin (static members stay,
	// KAFKA-8220, 2.3+; profiles without static have only dynamic ones).
	for i := 0; i < len(g.members); {
		m := g.members[i]
		if m.awaitingJoin || m.isStatic() {
			i++
			continue
		}
		b.cancel(&m.hb)
		g.remove(m.id)
		b.emit(out, removedEvent(g.id, m.id, removedRebalance))
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		// Only un-rejoined static members remain: wait another rebalance
		// timeout for session expiry to remove them.
		b.armJoin(now, g, joinDelayed, g.rebalanceTimeout(), 0)
		return
	}
	b.initNextGeneration(g, out)
	if g.state == Empty {
		// storeGroup(group, Map.empty): fire-and-forget.
		b.storeGroup(now, g, &appendOp{kind: appendEmpty, rec: g.record(nil)}, out)
		return
	}
	for _, m := range g.members {
		resp := b.joinResult(g, m, g.leader, g.leader == m.id, false)
		b.maybeInvokeJoinCallback(m, resp, out)
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		m.isNew = false
		if b.feat.pendingSync && !m.pendingSync {
			m.pendingSync = true
			g.numPendingSync++
		}
	}
	if b.feat.pendingSync {
		// schedulePendingSync: DelayedSync(generation, rebalanceTimeoutMs).
		g.syncGen = g.generation
		b.schedule(&g.sync, now.Add(g.rebalanceTimeout()))
	}
}

// initNextGeneration mirrors GroupMetadata.initNextGeneration.
func (b *Broker) initNextGeneration(g *group, out *Output) {
	g.generation++
	for _, m := range g.members {
		if m.pendingSync {
			m.pendingSync = false
		}
	}
	g.numPendingSync = 0
	g.stalePendingSync = 0
	if len(g.members) > 0 {
		g.protocolName = g.selectProtocol()
		b.becomeCompletingRebalance(g, out)
	} else {
		g.protocolName = ""
		b.becomeEmpty(g, out)
	}
	b.emit(out, protocol.Event{Kind: protocol.EvGenerationComplete, Group: g.id, Gen: g.generation,
		Count: int32(len(g.members)), Peer: g.leader})
}

// maybeInvokeJoinCallback mirrors GroupMetadata.maybeInvokeJoinCallback.
func (b *Broker) maybeInvokeJoinCallback(m *member, resp *protocol.JoinGroupResponse, out *Output) bool {
	if !m.awaitingJoin {
		return false
	}
	b.reply(out, m.joinConn, m.joinCorr, resp)
	m.awaitingJoin = false
	if g := m.hb.g; g != nil {
		g.numAwaitingJoin--
		check(g.numAwaitingJoin >= 0, "maybeInvokeJoinCallback: numAwaitingJoin < 0")
	}
	return true
}

// maybeInvokeSyncCallback mirrors GroupMetadata.maybeInvokeSyncCallback.
func (b *Broker) maybeInvokeSyncCallback(m *member, resp *protocol.SyncGroupResponse, out *Output) bool {
	if !m.awaitingSync {
		return false
	}
	b.reply(out, m.syncConn, m.syncCorr, resp)
	m.awaitingSync = false
	return true
}
