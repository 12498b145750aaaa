package coordinator

import (
	"github.com/rebalsim/rebalsim/model/protocol"
)

// handleSyncGroup mirrors GroupCoordinator.handleSyncGroup / doSyncGroup
// (3.6.1, §12.7).
func (b *Broker) handleSyncGroup(now protocol.Instant, conn Conn, corr uint64, r *protocol.SyncGroupRequest, out *Output) {
	p, errc := b.groupFor(r.GroupID, protocol.APISyncGroup)
	switch errc {
	case protocol.None:
	case protocol.CoordinatorLoadInProgress:
		if b.feat.javaClassic {
			// The Java runtime's CoordinatorLoadInProgressException goes
			// back as is (GroupCoordinatorService.syncGroup v8.0.0
			// 436-475): a classic client's SyncGroup handler calls it
			// "Unexpected error from SyncGroup" (a KafkaException).
			b.syncError(out, conn, corr, protocol.CoordinatorLoadInProgress)
			return
		}
		// The in-memory rebalance state is lost on failover, and old
		// clients do not know the loading error (apache/kafka#4788).
		b.syncError(out, conn, corr, protocol.RebalanceInProgress)
		return
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
		b.syncError(out, conn, corr, errc)
		return
	}
	g := p.group
	if g == nil {
		b.syncError(out, conn, corr, protocol.UnknownMemberID)
		return
	}
	if g.state == Dead {
		b.syncError(out, conn, corr, protocol.CoordinatorNotAvailable)
		return
	}
	if errc := b.validateCurrentMember(g, r.MemberID, r.GroupInstanceID); errc != protocol.None {
		b.syncError(out, conn, corr, errc)
		return
	}
	if r.GenerationID != g.generation {
		b.syncError(out, conn, corr, protocol.IllegalGeneration)
		return
	}
	// KIP-559 (SyncGroup v5+): protocol type and name, when given, must
	// match the group's.
	if (r.ProtocolType != "" && r.ProtocolType != g.protocolType) ||
		(r.ProtocolName != "" && r.ProtocolName != g.protocolName) {
		b.syncError(out, conn, corr, protocol.InconsistentGroupProtocol)
		return
	}
	m := g.byID[r.MemberID]
	switch g.state {
	case Empty:
		b.syncError(out, conn, corr, protocol.UnknownMemberID)
	case PreparingRebalance:
		b.syncError(out, conn, corr, protocol.RebalanceInProgress)
	case CompletingRebalance:
		// Park the member's sync callback. A second SyncGroup from the same
		// member replaces the callback (the first is never answered), as
		// in Kafka.
		m.awaitingSync = true
		m.syncConn, m.syncCorr = conn, corr
		b.removePendingSyncMember(g, m)
		if g.leader != m.id {
			return
		}
		// The leader's assignment: fill missing members with empty
		// assignments and store the group; the storeGroup callback
		// (onSyncGroupStored) answers the parked members when the append
		// completes, if the group is still CompletingRebalance in this
		// generation.
		assignment := make(map[string]protocol.Assignment, len(g.members))
		for i := range r.Assignments {
			assignment[r.Assignments[i].MemberID] = r.Assignments[i].Assignment
		}
		b.storeGroup(now, g, &appendOp{kind: appendSync, rec: g.record(assignment), assignment: assignment}, out)
	case Stable:
		b.removePendingSyncMember(g, m)
		b.reply(out, conn, corr, &protocol.SyncGroupResponse{Error: protocol.None, ProtocolType: g.protocolType,
			ProtocolName: g.protocolName, Assignment: m.assignment})
		g.markResynced(m)
		if !b.feat.javaClassic {
			// Scala only (GroupCoordinator.scala 3.6.1 638); the Java
			// coordinator answers without touching the session.
			b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		}
	case Dead:
		panic("coordinator: doSyncGroup: Dead group past the pre-checks")
	}
}

func (b *Broker) syncError(out *Output, conn Conn, corr uint64, errc protocol.ErrorCode) {
	b.reply(out, conn, corr, &protocol.SyncGroupResponse{Error: errc})
}

// removePendingSyncMember mirrors GroupCoordinator.removePendingSyncMember:
// once every member has synced the DelayedSync completes (here: is
// cancelled).
func (b *Broker) removePendingSyncMember(g *group, m *member) {
	if !m.pendingSync {
		return
	}
	m.pendingSync = false
	g.numPendingSync--
	check(g.numPendingSync >= 0, "removePendingSyncMember: count < 0")
	if g.numPendingSync == 0 {
		b.cancel(&g.sync)
	}
}

// setAndPropagateAssignment mirrors GroupCoordinator.setAndPropagateAssignment.
func (b *Broker) setAndPropagateAssignment(now protocol.Instant, g *group, assignment map[string]protocol.Assignment, out *Output) {
	check(g.state == CompletingRebalance, "setAndPropagateAssignment: not CompletingRebalance")
	for _, m := range g.members {
		m.assignment = assignment[m.id]
	}
	b.propagateAssignment(now, g, protocol.None, out)
}

// resetAndPropagateAssignmentError mirrors
// GroupCoordinator.resetAndPropagateAssignmentError.
func (b *Broker) resetAndPropagateAssignmentError(now protocol.Instant, g *group, errc protocol.ErrorCode, out *Output) {
	check(g.state == CompletingRebalance, "resetAndPropagateAssignmentError: not CompletingRebalance")
	for _, m := range g.members {
		m.assignment = protocol.Assignment{}
	}
	b.propagateAssignment(now, g, errc, out)
}

// propagateAssignment mirrors GroupCoordinator.propagateAssignment: every
// parked SyncGroup is answered and that member's session is rescheduled.
// Members answered in join order.
func (b *Broker) propagateAssignment(now protocol.Instant, g *group, errc protocol.ErrorCode, out *Output) {
	for _, m := range g.members {
		resp := &protocol.SyncGroupResponse{Error: errc, Assignment: m.assignment}
		if errc == protocol.None {
			resp.ProtocolType, resp.ProtocolName = g.protocolType, g.protocolName
		}
		if b.maybeInvokeSyncCallback(m, resp, out) {
			if errc == protocol.None {
				g.markResynced(m)
			}
			b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
		}
	}
}

// onExpirePendingSync mirrors GroupCoordinator.onExpirePendingSync
// (DelayedSync expiry, KAFKA-12890, 2.8.1+).
func (b *Broker) onExpirePendingSync(now protocol.Instant, g *group, out *Output) {
	if g.syncGen != g.generation {
		return
	}
	switch g.state {
	case Dead, Empty, PreparingRebalance:
		return
	case CompletingRebalance, Stable:
	}
	if g.numPendingSync == 0 {
		return
	}
	for i := 0; i < len(g.members); {
		m := g.members[i]
		if !m.pendingSync {
			i++
			continue
		}
		// group.remove + removeHeartbeatForLeavingMember.
		b.cancel(&m.hb)
		g.remove(m.id)
		b.emit(out, removedEvent(g.id, m.id, removedSync))
	}
	// The replaced static members' old ids: group.remove is a no-op for the
	// member map but drops them from pendingSyncMembers.
	g.numPendingSync -= g.stalePendingSync
	g.stalePendingSync = 0
	b.prepareRebalance(now, g, reasonSyncTimeout, out)
}
