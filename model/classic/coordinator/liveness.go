package coordinator

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// completeAndScheduleNextHeartbeatExpiration mirrors the Scala method of
// that name: the member's session restarts at now + its session timeout.
func (b *Broker) completeAndScheduleNextHeartbeatExpiration(now protocol.Instant, g *group, m *member) {
	b.completeAndScheduleNextExpiration(now, g, m, m.cfg.SessionTimeout)
}

// completeAndScheduleNextExpiration mirrors
// GroupCoordinator.completeAndScheduleNextExpiration: the current expiry is
// completed and a new DelayedHeartbeat is watched. Scala's
// tryCompleteElseWatch completes the new one at once when the member is
// parked in JoinGroup or SyncGroup and not new (hasSatisfiedHeartbeat), so
// then no expiry is armed: liveness is suspended until join completion or
// assignment propagation reschedules it.
func (b *Broker) completeAndScheduleNextExpiration(now protocol.Instant, g *group, m *member, timeout time.Duration) {
	if b.feat.kafka9752NewExpiryNotArmed && m.isNew && b.cfg.NewMemberJoinTimeout > timeout {
		// KAFKA-9752 (2.2.0–2.4.1): the pre-fix shouldKeepAlive(deadline)
		// of a new member, latestHeartbeat + NewMemberJoinTimeoutMs >
		// now + timeout, holds, so the new DelayedHeartbeat completes
		// at once and no expiry is armed (MemberMetadata.scala 2.4.1
		// 88-99). onCompleteJoin clears isNew only after this call.
		b.cancel(&m.hb)
		return
	}
	if m.hasSatisfiedHeartbeat() {
		b.cancel(&m.hb)
		return
	}
	b.schedule(&m.hb, now.Add(timeout))
}

// onExpireHeartbeat mirrors GroupCoordinator.onExpireHeartbeat for a member
// (isPending=false).
func (b *Broker) onExpireHeartbeat(now protocol.Instant, g *group, m *member, out *Output) {
	if g.state == Dead || g.byID[m.id] != m {
		return
	}
	if m.hasSatisfiedHeartbeat() {
		// Parked in JoinGroup or SyncGroup (and not new): kept, no new
		// expiry.
		return
	}
	reason := removedSession
	if m.isNew {
		reason = removedNewMember
	}
	b.removeMemberAndUpdateGroup(now, g, m, reason, reasonSession, out)
	b.javaCompleteJoinOnExpiry(now, g, out)
}

// javaCompleteJoinOnExpiry: the Java coordinator's expiry paths complete
// the join directly when every remaining member has joined
// (removeMemberAndUpdateClassicGroup / removePendingMemberAndUpdateClassicGroup,
// GroupMetadataManager v8.0.0 5055-5096), cutting an initial delay short;
// Scala's checkAndComplete never completes an InitialDelayedJoin early.
func (b *Broker) javaCompleteJoinOnExpiry(now protocol.Instant, g *group, out *Output) {
	if !b.feat.javaClassic || g.state != PreparingRebalance || g.joinKind != joinInitial || !g.hasAllMembersJoined() {
		return
	}
	b.cancel(&g.join)
	g.joinKind = joinNone
	b.onCompleteJoin(now, g, out)
}

// onExpirePendingMember mirrors onExpireHeartbeat(isPending=true) →
// removePendingMemberAndUpdateGroup.
func (b *Broker) onExpirePendingMember(now protocol.Instant, g *group, pm *pendingMember, out *Output) {
	if g.state == Dead {
		return
	}
	b.removePendingMemberAndUpdateGroup(now, g, pm.id, out)
	b.javaCompleteJoinOnExpiry(now, g, out)
}

// removePendingMemberAndUpdateGroup mirrors the Scala method.
func (b *Broker) removePendingMemberAndUpdateGroup(now protocol.Instant, g *group, id string, out *Output) {
	if pm := g.removePending(id); pm != nil {
		b.cancel(&pm.timer)
	}
	if g.state == PreparingRebalance {
		b.tryCompleteJoin(now, g, out)
	}
}

// removeMemberAndUpdateGroup mirrors GroupCoordinator.removeMemberAndUpdateGroup
// (§12.9), plus removeHeartbeatForLeavingMember. removedReason goes to
// EvMemberRemoved, trigger to EvRebalanceStart.
func (b *Broker) removeMemberAndUpdateGroup(now protocol.Instant, g *group, m *member, removedReason protocol.RemovalReason, trigger string, out *Output) {
	// A member parked in JoinGroup (e.g. a new member hitting the 5-minute
	// cap) is answered UNKNOWN_MEMBER_ID before removal.
	b.maybeInvokeJoinCallback(m, &protocol.JoinGroupResponse{Error: protocol.UnknownMemberID,
		GenerationID: protocol.NoGeneration, MemberID: protocol.UnknownMemberIDValue}, out)
	b.cancel(&m.hb)
	g.remove(m.id)
	b.emit(out, removedEvent(g.id, m.id, removedReason))
	switch g.state {
	case Dead, Empty:
	case Stable, CompletingRebalance:
		b.maybePrepareRebalance(now, g, trigger, out)
	case PreparingRebalance:
		b.tryCompleteJoin(now, g, out)
	}
	if g.numPendingSync == 0 {
		b.cancel(&g.sync)
	}
}

// heartbeatResponse returns a shared response for the common codes (no
// allocation on the heartbeat path); responses are read-only.
func (b *Broker) heartbeatResponse(errc protocol.ErrorCode) protocol.Response {
	switch errc {
	case protocol.None:
		return &b.hbResp[0]
	case protocol.RebalanceInProgress:
		return &b.hbResp[1]
	case protocol.IllegalGeneration:
		return &b.hbResp[2]
	case protocol.UnknownMemberID:
		return &b.hbResp[3]
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.CoordinatorLoadInProgress, protocol.CoordinatorNotAvailable, protocol.NotCoordinator,
		protocol.InconsistentGroupProtocol, protocol.InvalidGroupID, protocol.InvalidSessionTimeout,
		protocol.InvalidCommitOffsetSize, protocol.GroupAuthorizationFailed, protocol.UnsupportedVersion,
		protocol.MemberIDRequired, protocol.GroupMaxSizeReached, protocol.FencedInstanceID,
		protocol.GroupIDNotFound, protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower,
		protocol.UnknownTopicOrPartition, protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
	}
	return &protocol.HeartbeatResponse{Error: errc}
}

// handleHeartbeat mirrors GroupCoordinator.handleHeartbeat (3.6.1, §12.8).
// The hot path: no allocation when the answer is NONE.
func (b *Broker) handleHeartbeat(now protocol.Instant, conn Conn, corr uint64, r *protocol.HeartbeatRequest, out *Output) {
	resp := b.heartbeatResponse(b.heartbeat(now, conn, r))
	if b.lingers() {
		// A Heartbeat writes nothing: it waits for the open batch (linger.go).
		b.replyAfterWrite(now, b.ownedGroup(r.GroupID), false, out, conn, corr, resp)
		return
	}
	b.reply(out, conn, corr, resp)
}

func (b *Broker) heartbeat(now protocol.Instant, conn Conn, r *protocol.HeartbeatRequest) protocol.ErrorCode {
	p, errc := b.groupFor(r.GroupID, protocol.APIHeartbeat)
	switch errc {
	case protocol.None:
	case protocol.CoordinatorLoadInProgress:
		// Answered as healthy without looking at the group (§12.3).
		return protocol.None
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.IllegalGeneration,
		protocol.InconsistentGroupProtocol, protocol.InvalidGroupID, protocol.UnknownMemberID,
		protocol.InvalidSessionTimeout, protocol.RebalanceInProgress, protocol.InvalidCommitOffsetSize,
		protocol.GroupAuthorizationFailed, protocol.UnsupportedVersion, protocol.MemberIDRequired,
		protocol.GroupMaxSizeReached, protocol.FencedInstanceID, protocol.GroupIDNotFound,
		protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower, protocol.UnknownTopicOrPartition,
		protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		fallthrough
	default:
		return errc
	}
	g := p.group
	if g == nil {
		return protocol.UnknownMemberID
	}
	if g.state == Dead {
		return protocol.CoordinatorNotAvailable
	}
	m, errc := b.connMember(g, conn, r.MemberID, r.GroupInstanceID)
	if errc != protocol.None {
		return errc
	}
	if r.GenerationID != g.generation {
		return protocol.IllegalGeneration
	}
	switch g.state {
	case Empty:
		return protocol.UnknownMemberID
	case CompletingRebalance:
		if !b.feat.hbInCompleting {
			// ≤2.6.0: no reschedule (KAFKA-10134 fixed in 2.6.1).
			return protocol.RebalanceInProgress
		}
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		return protocol.None
	case PreparingRebalance:
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		return protocol.RebalanceInProgress
	case Stable:
		g.markResynced(m)
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		return protocol.None
	case Dead:
	}
	panic("coordinator: handleHeartbeat: Dead group past the pre-checks")
}

// handleLeaveGroup mirrors GroupCoordinator.handleLeaveGroup (3.x batch
// form, §12.9). Deviation in the response value: Error is what Kafka's
// LeaveGroupResponse.error() returns — the top-level error, else the first
// member error — so a single-member client can read one code; Members
// carries the per-member errors as on the wire (v3+).
func (b *Broker) handleLeaveGroup(now protocol.Instant, conn Conn, corr uint64, r *protocol.LeaveGroupRequest, out *Output) {
	p, errc := b.groupFor(r.GroupID, protocol.APILeaveGroup)
	if errc != protocol.None {
		b.reply(out, conn, corr, &protocol.LeaveGroupResponse{Error: errc})
		return
	}
	resp := &protocol.LeaveGroupResponse{Members: make([]protocol.LeaveGroupMemberResponse, 0, len(r.Members))}
	g := p.group
	if g != nil && g.state == Dead {
		b.reply(out, conn, corr, &protocol.LeaveGroupResponse{Error: protocol.CoordinatorNotAvailable})
		return
	}
	for i := range r.Members {
		lm := &r.Members[i]
		res := protocol.LeaveGroupMemberResponse{MemberID: lm.MemberID, GroupInstanceID: lm.GroupInstanceID}
		res.Error = b.leaveOne(now, g, lm, out)
		resp.Members = append(resp.Members, res)
	}
	for i := range resp.Members {
		if resp.Members[i].Error != protocol.None {
			resp.Error = resp.Members[i].Error
			break
		}
	}
	// Answered after the open batch, if any (the Empty-group record a
	// leave may write has joined it): linger.go.
	b.replyAfterWrite(now, g, false, out, conn, corr, resp)
}

// leaveOne handles one member of a batch LeaveGroup.
func (b *Broker) leaveOne(now protocol.Instant, g *group, lm *protocol.LeaveGroupMember, out *Output) protocol.ErrorCode {
	if g == nil {
		return protocol.UnknownMemberID
	}
	if lm.MemberID == protocol.UnknownMemberIDValue {
		// Administrative removal by instance id.
		m, ok := g.static[lm.GroupInstanceID]
		if lm.GroupInstanceID == "" || !ok || !b.feat.static {
			return protocol.UnknownMemberID
		}
		b.removeMemberAndUpdateGroup(now, g, m, removedLeave, reasonLeave, out)
		return protocol.None
	}
	if _, pending := g.pendingByID[lm.MemberID]; pending {
		b.removePendingMemberAndUpdateGroup(now, g, lm.MemberID, out)
		return protocol.None
	}
	if errc := b.validateCurrentMember(g, lm.MemberID, lm.GroupInstanceID); errc != protocol.None {
		return errc
	}
	b.removeMemberAndUpdateGroup(now, g, g.byID[lm.MemberID], removedLeave, reasonLeave, out)
	return protocol.None
}

// handleOffsetCommit mirrors GroupCoordinator.handleCommitOffsets /
// doCommitOffsets / validateOffsetCommit (§12.10). Offsets themselves are
// not stored; only the group-membership effects are modelled.
func (b *Broker) handleOffsetCommit(now protocol.Instant, conn Conn, corr uint64, r *protocol.OffsetCommitRequest, out *Output) {
	// Auto-commit makes this the second most frequent request: the NONE
	// answer is one shared read-only response, as for heartbeats.
	errc := b.offsetCommit(now, conn, r, out)
	var resp protocol.Response = &b.ocOK
	if errc != protocol.None {
		resp = &protocol.OffsetCommitResponse{Error: errc}
	}
	if b.lingers() {
		// The Java coordinator: a commit writes its offsets into the open
		// batch and is answered at its flush; a failed one writes nothing
		// and waits for an open batch (linger.go).
		b.replyAfterWrite(now, b.ownedGroup(r.GroupID), errc == protocol.None, out, conn, corr, resp)
		return
	}
	b.reply(out, conn, corr, resp)
}

func (b *Broker) offsetCommit(now protocol.Instant, conn Conn, r *protocol.OffsetCommitRequest, out *Output) protocol.ErrorCode {
	p, errc := b.groupFor(r.GroupID, protocol.APIOffsetCommit)
	if errc != protocol.None {
		return errc
	}
	g := p.group
	if g == nil {
		if r.GenerationID >= 0 {
			// A commit from an older generation for a group that is gone.
			return protocol.IllegalGeneration
		}
		// Not relying on Kafka group management: the commit creates an
		// Empty group (groupManager.addGroup).
		g = newGroup(r.GroupID, p)
		p.group = g
		b.emitState(g, "", out)
	}
	if g.state == Dead {
		return protocol.CoordinatorNotAvailable
	}
	if r.GenerationID < 0 && g.state == Empty && !b.feat.commitEmptyNeedsMember {
		// validateOffsetCommit (3.6.1 GroupCoordinator.scala 989-993;
		// KAFKA-14201, 3.4.0; the same branch ≤2.8): generation -1 to an
		// Empty group is a simple commit whatever member id it carries.
		return protocol.None
	}
	var m *member // the committing member, once validated
	if r.GenerationID >= 0 || r.MemberID != protocol.UnknownMemberIDValue || r.GroupInstanceID != "" {
		var errc protocol.ErrorCode
		if m, errc = b.connMember(g, conn, r.MemberID, r.GroupInstanceID); errc != protocol.None {
			return errc
		}
		if r.GenerationID != g.generation {
			return protocol.IllegalGeneration
		}
	} else if g.state != Empty {
		// Only members can commit to a non-empty group.
		return protocol.UnknownMemberID
	}
	switch g.state {
	case Empty:
		// Generation -1, no member: a simple (manual-assignment) commit.
		return protocol.None
	case Stable, PreparingRebalance:
		if g.state == Stable {
			g.markResynced(m)
		}
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		return protocol.None
	case CompletingRebalance:
		return protocol.RebalanceInProgress
	case Dead:
	}
	panic("coordinator: offsetCommit: Dead group past the pre-checks")
}
