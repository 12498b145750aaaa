package client

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is the join future: AbstractCoordinator.joinGroupIfNeeded,
// initiateJoinGroup, the JoinGroup and SyncGroup requests and their response
// handlers, onJoinLeader/onJoinFollower, and ConsumerCoordinator's
// onJoinPrepare and onJoinComplete.

// joinStatus is the state of AbstractCoordinator.joinFuture.
type joinStatus uint8

const (
	joinIdle      joinStatus = iota // joinFuture == null
	joinWaiting                     // JoinGroup or SyncGroup outstanding
	joinSucceeded                   // SyncGroup answered NONE; onJoinComplete not yet run
	joinFailed                      // the future failed with joinErr
)

// failKind classifies a join failure the way joinGroupIfNeeded does.
type failKind uint8

const (
	failRetriable failKind = iota // backoff, then retry
	failImmediate                 // UnknownMemberId, IllegalGeneration, RebalanceInProgress, MemberIdRequired: loop at once
	failFatal                     // not retriable: thrown from poll()
)

// joinFuture is AbstractCoordinator.joinFuture with onJoinComplete's progress.
type joinFuture struct {
	status     joinStatus
	complete   joinCompletePhase  // onJoinComplete progress
	revoked    bool               // onJoinComplete revoked partitions (COOPERATIVE)
	kind       failKind           // joinFailed: how joinGroupIfNeeded treats it
	err        protocol.ErrorCode // joinFailed: the future's exception
	joinCorr   uint64             // the JoinGroup in flight (0: none)
	syncCorr   uint64             // the SyncGroup in flight (0: none)
	assignment []protocol.TopicPartition
	retryAt    protocol.Instant // 3.5+: no JoinGroup before (KAFKA-12639)
}

// joinCompletePhase is the progress of ConsumerCoordinator.onJoinComplete,
// which may be interrupted by a rebalance-listener callback.
type joinCompletePhase uint8

const (
	jcNone      joinCompletePhase = iota
	jcRevoking                    // the COOPERATIVE revocation of owned − assigned
	jcAssigning                   // onPartitionsAssigned(added)
)

// joinGroupIfNeeded is AbstractCoordinator.joinGroupIfNeeded (3.6.1 with the
// profile's deltas, §5.4). It never blocks: "waiting" is returning and being
// re-entered by appIterate when something happens.
func (m *Member) joinGroupIfNeeded(now protocol.Instant, out *Output) {
	for range maxJoinPasses {
		if !m.rejoinNeededOrPending() || m.app.phase != appPolling || m.stopped {
			return
		}
		if !m.ensureCoordinatorReady(now, out) {
			return
		}
		if m.needsJoinPrepare {
			if !m.joinPrepareCommit(now, out) {
				return // waiting for onJoinPrepare's auto-commit
			}
			m.needsJoinPrepare = false
			gen := *m.gen
			if m.cfg.AutoCommit && !m.cfg.behaviour.asyncJoinPrepareCommit {
				gen = *m.autoCommit.p.gen // ≤3.1: arguments read before the synchronous commit
			}
			m.autoCommit.p = nil // onJoinPrepare's commit is over (prepIdle)
			if m.onJoinPrepare(now, out, gen) {
				return // a callback runs; appIterate re-enters here afterwards
			}
		}
		if m.join.status == joinIdle && now < m.join.retryAt {
			return // 3.5+: returned on the expired timer; retry after retry.backoff.ms
		}
		m.initiateJoinGroup(now, out)
		switch m.join.status {
		case joinIdle, joinWaiting:
			return
		case joinSucceeded:
			if !m.gen.hasReset() && m.state == Stable {
				m.beginJoinComplete(now, out)
				continue
			}
			// The heartbeat thread reset the generation meanwhile.
			m.join.status = joinIdle
			m.resetStateAndGeneration(out, protocol.APISyncGroup, "generation reset before onJoinComplete", false)
			m.requestRejoin(out, RejoinGenerationResetBeforeSync)
		case joinFailed:
			err, kind := m.join.err, m.join.kind
			m.join.status = joinIdle
			if err != protocol.MemberIDRequired {
				m.requestRejoin(out, RejoinJoinFailed)
			}
			switch kind {
			case failImmediate:
				continue
			case failFatal:
				m.fatal(out, err, "join")
				return
			case failRetriable:
			}
			if m.cfg.behaviour.retriableJoinResetsGeneration {
				// KAFKA-10134 side effect (2.6.1–2.8.0): rejoin as a new member.
				m.resetStateAndGeneration(out, protocol.APIJoinGroup, err.String(), false)
			}
			switch {
			case !m.cfg.behaviour.nonBlockingJoin:
				// Timer.sleep(retry.backoff.ms): the thread sleeps, handling nothing.
				m.startBusy(now, m.cfg.RetryBackoff, contResume)
				return
			case m.cfg.behaviour.joinLoopReturnsOnExpiredTimer:
				// KAFKA-12639 (3.5+): return on the expired zero timer; the
				// next ConsumerCoordinator.poll comes after the network poll,
				// which pollForFetches caps at retry.backoff.ms.
				m.join.retryAt = now.Add(m.cfg.RetryBackoff)
				return
			default:
				// 2.5–3.4: Timer.sleep on a zero timer sleeps 0 and the loop
				// re-sends at once (the KAFKA-12639 bug).
				continue
			}
		}
	}
}

// initiateJoinGroup is AbstractCoordinator.initiateJoinGroup: only one
// JoinGroup+SyncGroup (joinFuture) at a time.
func (m *Member) initiateJoinGroup(now protocol.Instant, out *Output) {
	if m.join.status != joinIdle {
		return
	}
	m.join.retryAt = 0
	m.becomePreparingRebalance(out)
	m.join.status = joinWaiting
	m.sendJoinGroupRequest(now, out)
}

// sendJoinGroupRequest is AbstractCoordinator.sendJoinGroupRequest with
// ConsumerCoordinator.metadata() as the protocol list.
func (m *Member) sendJoinGroupRequest(now protocol.Instant, out *Output) {
	if !m.coord.known {
		m.failJoin(out, protocol.CoordinatorNotAvailable, failRetriable)
		return
	}
	rebalanceTimeout := m.cfg.MaxPollInterval
	if m.cfg.behaviour.join.version == 0 {
		// JoinGroup v0 has no rebalance timeout; the broker uses the session timeout.
		rebalanceTimeout = m.cfg.SessionTimeout
	}
	req := &protocol.JoinGroupRequest{
		ClientID:         m.name,
		GroupID:          m.cfg.GroupID,
		SessionTimeout:   m.cfg.SessionTimeout,
		RebalanceTimeout: rebalanceTimeout,
		MemberID:         m.gen.memberID(),
		ProtocolType:     protocol.ConsumerProtocolType,
		Version:          m.cfg.behaviour.join.version,
	}
	if m.cfg.behaviour.staticMembership {
		req.GroupInstanceID = m.instanceID()
	}
	if m.cfg.behaviour.join.reason {
		req.Reason = m.rejoinReason.String()
	}
	req.Protocols = m.joinProtocols()
	var timeout time.Duration
	const lapse = 5 * time.Second // JOIN_GROUP_TIMEOUT_LAPSE
	switch m.cfg.behaviour.join.timeout {
	case joinTimeoutRequest:
		timeout = m.cfg.RequestTimeout
	case joinTimeoutRebalance:
		timeout = rebalanceTimeout + lapse
	case joinTimeoutMaxOfRequestAnd:
		timeout = max(m.cfg.RequestTimeout, rebalanceTimeout+lapse)
	}
	m.join.joinCorr = m.send(now, out, m.coord.node, true, req, timeout)
}

// joinProtocols is ConsumerCoordinator.metadata(): one protocol per
// configured assignor, each with the member's subscription (topics, owned
// partitions from 2.4, generation from 3.x's subscription v2).
//
// A subscription without owned partitions is the same for every member of
// the template that joins at the same generation (a whole eager group after
// its revocation, every first join): that list is built once and shared by
// them and by the coordinator that keeps it (issue 15: 176 bytes per member
// at two assignors). It is never changed in place (nothing writes a
// request's protocols), so sharing it changes no output.
func (m *Member) joinProtocols() []protocol.GroupProtocol {
	sub := protocol.Subscription{Topics: m.cfg.Topics, GenerationID: protocol.NoGeneration}
	if m.cfg.behaviour.ownedInSubscription() && len(m.owned) > 0 {
		sub.OwnedPartitions = slices.Clone(m.owned)
	}
	if m.cfg.behaviour.subscription >= subscriptionV2 {
		sub.GenerationID = m.gen.id()
	}
	shared := sub.OwnedPartitions == nil
	if c := m.cfg.joinProtocols; shared && c != nil && c[0].Metadata.GenerationID == sub.GenerationID {
		return c
	}
	ps := make([]protocol.GroupProtocol, len(m.cfg.Assignors))
	for i, name := range m.cfg.Assignors {
		ps[i] = protocol.GroupProtocol{Name: name, Metadata: sub}
	}
	if shared && len(ps) > 0 {
		m.cfg.joinProtocols = ps
	}
	return ps
}

// sendSyncGroupRequest is AbstractCoordinator.sendSyncGroupRequest.
func (m *Member) sendSyncGroupRequest(now protocol.Instant, out *Output, req *protocol.SyncGroupRequest) {
	if m.join.status != joinWaiting {
		return // the join was abandoned meanwhile
	}
	if !m.coord.known {
		m.failJoin(out, protocol.CoordinatorNotAvailable, failRetriable)
		return
	}
	m.join.syncCorr = m.send(now, out, m.coord.node, true, req, m.cfg.RequestTimeout)
}

// failJoin fails the join future. Before 2.6.1 the future's failure listener
// also set the state to UNJOINED.
func (m *Member) failJoin(out *Output, err protocol.ErrorCode, kind failKind) {
	if m.join.status != joinWaiting {
		return
	}
	m.join.status = joinFailed
	m.join.err = err
	m.join.kind = kind
	m.join.joinCorr, m.join.syncCorr = 0, 0
	if !m.cfg.behaviour.fourStates {
		m.becomeUnjoined(out)
	}
}

// onJoinPrepare is ConsumerCoordinator.onJoinPrepare after its auto-commit
// (joinPrepareCommit): lost (generation or member id reset, 2.4+; gen is the
// generation onJoinPrepare was called with), else EAGER revokes everything
// and COOPERATIVE revokes only partitions of unsubscribed topics (never,
// here). It reports whether a callback now keeps the application busy.
func (m *Member) onJoinPrepare(now protocol.Instant, out *Output, gen generation) bool {
	if m.meta != nil {
		m.meta.isLeader = false
	}
	if len(m.owned) == 0 {
		return false
	}
	switch {
	case m.cfg.behaviour.ownedInSubscription() && (gen.id() == protocol.NoGeneration || gen.memberID() == ""):
		return m.invokeCallback(now, out, cbLost, slices.Clone(m.owned), contResume)
	case !m.cooperative:
		return m.invokeCallback(now, out, cbRevoked, slices.Clone(m.owned), contResume)
	}
	return false
}

// beginJoinComplete is ConsumerCoordinator.onJoinComplete, first half:
// COOPERATIVE revokes owned − assigned (KIP-429).
func (m *Member) beginJoinComplete(now protocol.Instant, out *Output) {
	if m.meta != nil && !m.meta.isLeader {
		m.meta.assignment = nil // onJoinComplete: only the leader watches metadata
	}
	m.join.complete = jcRevoking
	m.join.revoked = false
	if m.cooperative {
		revoked := subtract(m.owned, m.join.assignment)
		if len(revoked) > 0 {
			m.join.revoked = true
			if m.invokeCallback(now, out, cbRevoked, revoked, contJoinComplete) {
				return
			}
		}
	}
	m.continueJoinComplete(now, out)
}

// continueJoinComplete is onJoinComplete's second half: request the
// follow-up rebalance if something was revoked, take the assignment and call
// onPartitionsAssigned(added); then joinGroupIfNeeded clears the join future.
func (m *Member) continueJoinComplete(now protocol.Instant, out *Output) {
	if m.join.complete == jcRevoking {
		m.join.complete = jcAssigning
		if m.join.revoked {
			m.requestRejoin(out, RejoinCooperativeRevocation)
		}
		m.autoCommitReschedule(now)
		added := subtract(m.join.assignment, m.owned)
		if len(added) == 0 {
			m.app.cb, m.app.cbParts = cbAssigned, nil
			m.applyCallback(out)
		} else if m.invokeCallback(now, out, cbAssigned, added, contJoinComplete) {
			return
		}
	}
	m.join.complete = jcNone
	m.join.status = joinIdle
	m.needsJoinPrepare = true
	m.hbt.reset(now)
}

// protocolTypeInconsistent is AbstractCoordinator.isProtocolTypeInconsistent
// (2.5+, KIP-559): a JoinGroup or SyncGroup response naming a protocol type
// other than "consumer" fails the join with INCONSISTENT_GROUP_PROTOCOL
// (an empty one, from an older broker, is not checked).
func (m *Member) protocolTypeInconsistent(protocolType string) bool {
	return m.cfg.behaviour.protocolTypeChecked && protocolType != "" && protocolType != protocol.ConsumerProtocolType
}

// handleJoinGroup is JoinGroupResponseHandler.handle (§5.6).
func (m *Member) handleJoinGroup(now protocol.Instant, out *Output, e inflight, r *protocol.JoinGroupResponse) {
	if e.Corr != m.join.joinCorr || m.join.status != joinWaiting {
		return
	}
	m.join.joinCorr = 0
	switch r.Error {
	case protocol.None:
		if m.protocolTypeInconsistent(r.ProtocolType) {
			m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
			return
		}
		if m.state != PreparingRebalance {
			// UnjoinedGroupException (retriable): we left meanwhile.
			m.failJoin(out, protocol.UnknownServerError, failRetriable)
			return
		}
		if m.cfg.behaviour.fourStates {
			m.becomeCompletingRebalance(now, out)
		}
		g := &generation{protocol: r.ProtocolName, hasProtocol: true, hbReady: true}
		g.hb = protocol.HeartbeatRequest{GroupID: m.cfg.GroupID, GenerationID: r.GenerationID, MemberID: r.MemberID}
		if m.cfg.behaviour.staticMembership {
			g.hb.GroupInstanceID = m.instanceID()
		}
		m.gen = g
		leader := r.Leader == r.MemberID
		detail := "follower"
		if leader {
			detail = "leader"
		}
		m.emit(out, protocol.Event{Kind: protocol.EvJoined, Gen: r.GenerationID, Detail: detail, Peer: r.Leader, Count: int32(len(r.Members))})
		if leader {
			m.onJoinLeader(now, out, r)
		} else {
			m.onJoinFollower(now, out)
		}
	case protocol.CoordinatorLoadInProgress:
		m.failJoin(out, r.Error, failRetriable)
	case protocol.UnknownMemberID:
		if m.generationUnchanged(e.Data.sentGen) {
			m.resetStateAndRejoin(out, protocol.APIJoinGroup, r.Error, false, RejoinUnknownMemberID)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, r.Error, false)
		m.failJoin(out, r.Error, failRetriable)
	case protocol.FencedInstanceID, protocol.InconsistentGroupProtocol, protocol.InvalidSessionTimeout,
		protocol.InvalidGroupID, protocol.GroupAuthorizationFailed, protocol.GroupMaxSizeReached,
		protocol.UnsupportedVersion:
		m.failJoin(out, r.Error, failFatal)
	case protocol.MemberIDRequired:
		if m.cfg.behaviour.join.version < joinVersionMemberIDRequired {
			m.failJoin(out, r.Error, failFatal) // not expected below v4: "unexpected error"
			return
		}
		m.gen = newGeneration(protocol.NoGeneration, r.MemberID, "", false)
		m.requestRejoin(out, RejoinMemberIDRequired)
		m.failJoin(out, r.Error, failImmediate)
	case protocol.RebalanceInProgress:
		if m.cfg.behaviour.joinRebalanceInProgressRetriable {
			m.failJoin(out, r.Error, failImmediate) // KAFKA-10870 (2.8+)
		} else {
			m.failJoin(out, r.Error, failFatal) // "unexpected error"
		}
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.IllegalGeneration, protocol.InvalidCommitOffsetSize, protocol.GroupIDNotFound,
		protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower, protocol.UnknownTopicOrPartition,
		protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		m.failJoin(out, r.Error, failFatal) // KafkaException "unexpected error in join group response"
	default:
		m.failJoin(out, r.Error, failFatal)
	}
}

// onJoinFollower is AbstractCoordinator.onJoinFollower: an empty SyncGroup.
func (m *Member) onJoinFollower(now protocol.Instant, out *Output) {
	m.sendSyncGroupRequest(now, out, m.syncRequest(nil))
}

func (m *Member) syncRequest(assignments []protocol.SyncGroupAssignment) *protocol.SyncGroupRequest {
	req := &protocol.SyncGroupRequest{
		GroupID: m.cfg.GroupID, GenerationID: m.gen.id(), MemberID: m.gen.memberID(),
		Assignments: assignments,
	}
	if m.cfg.behaviour.staticMembership {
		req.GroupInstanceID = m.instanceID()
	}
	if m.cfg.behaviour.protocolTypeChecked {
		req.ProtocolType = protocol.ConsumerProtocolType
		req.ProtocolName = m.gen.protocol
	}
	return req
}

// onJoinLeader is AbstractCoordinator.onLeaderElected(JoinGroupResponse) with
// ConsumerCoordinator.onLeaderElected: run the assignor (unless
// skipAssignment, KIP-814), then SyncGroup. The assignor runs inside the
// synchronized JoinGroup handler, so for cfg.AssignTime the application
// thread is busy AND the heartbeat thread is blocked on the monitor.
// The leader's assignment snapshot (isLeader, assignmentSnapshot) is
// taken either way (metadata.go). Deviation: the cooperative-assignment
// validation is not modelled.
func (m *Member) onJoinLeader(now protocol.Instant, out *Output, r *protocol.JoinGroupResponse) {
	m.takeAssignmentSnapshot()
	if r.SkipAssignment {
		m.sendSyncGroupRequest(now, out, m.syncRequest(nil))
		return
	}
	a, ok := m.cfg.lookup(r.ProtocolName)
	if !ok {
		// IllegalStateException: the coordinator selected an unknown protocol.
		m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
		return
	}
	if !m.cfg.behaviour.stickyClaimsAllGenerations {
		// Before KAFKA-14639 (3.5.0) AbstractStickyAssignor counted only
		// the highest generation's claims (3.4.0 allSubscriptionsEqual).
		switch a.(type) {
		case assign.CooperativeStickyAssignor:
			a = assign.CooperativeStickyAssignor{HighestGenerationOnly: true}
		case assign.StickyAssignor:
			a = assign.StickyAssignor{HighestGenerationOnly: true}
		}
	}
	members := make([]assign.Member, len(r.Members))
	for i, jm := range r.Members {
		members[i] = assign.Member{ID: jm.MemberID, InstanceID: jm.GroupInstanceID, Subscription: jm.Metadata}
	}
	result := a.Assign(members, m.topicMetadata())
	assignments := make([]protocol.SyncGroupAssignment, len(members))
	for i := range members {
		var parts []protocol.TopicPartition
		if i < len(result) {
			parts = result[i]
		}
		assignments[i] = protocol.SyncGroupAssignment{MemberID: members[i].ID, Assignment: protocol.Assignment{Partitions: parts}}
	}
	req := m.syncRequest(assignments)
	if d := m.cfg.AssignTime.Draw(m.rng); d > 0 && m.onApp {
		m.app.pendingSync = req
		m.startBusy(now, d, contLeaderSync)
		return
	}
	m.sendSyncGroupRequest(now, out, req)
}

// handleSyncGroup is SyncGroupResponseHandler.handle (§5.7).
func (m *Member) handleSyncGroup(now protocol.Instant, out *Output, e inflight, r *protocol.SyncGroupResponse) {
	if e.Corr != m.join.syncCorr || m.join.status != joinWaiting {
		return
	}
	m.join.syncCorr = 0
	switch r.Error {
	case protocol.None:
		if m.protocolTypeInconsistent(r.ProtocolType) {
			m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
			return
		}
		want := CompletingRebalance
		if !m.cfg.behaviour.fourStates {
			want = PreparingRebalance
		}
		if m.gen.hasReset() || m.state != want {
			// Generation cleared by the heartbeat thread: ILLEGAL_GENERATION
			// makes the join loop retry at once.
			m.failJoin(out, protocol.IllegalGeneration, failImmediate)
			return
		}
		if m.cfg.behaviour.protocolTypeChecked && r.ProtocolName != "" && r.ProtocolName != m.gen.protocol {
			m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
			return
		}
		m.becomeStable(now, out)
		m.rejoinNeeded = false
		m.rejoinReason = RejoinNone
		m.join.status = joinSucceeded
		m.join.assignment = slices.Clone(r.Assignment.Partitions)
		slices.SortFunc(m.join.assignment, protocol.ComparePartitions)
	case protocol.GroupAuthorizationFailed, protocol.FencedInstanceID:
		m.failJoin(out, r.Error, failFatal)
	case protocol.RebalanceInProgress:
		if m.cfg.behaviour.syncRebalanceResetsGeneration {
			// KAFKA-13891 (3.3.0–3.3.1): resetStateOnResponseError without
			// the sent-generation guard the other errors have
			// (AbstractCoordinator 3.3.1 826-830).
			m.resetStateAndRejoin(out, protocol.APISyncGroup, r.Error, true, RejoinRebalanceInProgress)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.UnknownMemberID:
		if m.generationUnchanged(e.Data.sentGen) {
			m.resetStateAndRejoin(out, protocol.APISyncGroup, r.Error, false, RejoinUnknownMemberID)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.IllegalGeneration:
		if m.generationUnchanged(e.Data.sentGen) {
			m.resetStateAndRejoin(out, protocol.APISyncGroup, r.Error, m.cfg.behaviour.illegalGenerationKeepsID, RejoinIllegalGeneration)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, r.Error, false)
		m.failJoin(out, r.Error, failRetriable)
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.CoordinatorLoadInProgress, protocol.InconsistentGroupProtocol, protocol.InvalidGroupID,
		protocol.InvalidSessionTimeout, protocol.InvalidCommitOffsetSize, protocol.UnsupportedVersion,
		protocol.GroupIDNotFound, protocol.MemberIDRequired, protocol.GroupMaxSizeReached,
		protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower, protocol.UnknownTopicOrPartition,
		protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		// KafkaException "Unexpected error from SyncGroup" (COORDINATOR_LOAD_IN_PROGRESS
		// included: §15).
		m.failJoin(out, r.Error, failFatal)
	default:
		m.failJoin(out, r.Error, failFatal)
	}
}
