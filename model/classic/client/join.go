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
// re-entered by appThread.iterate when something happens.
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
				return // a callback runs; appThread.iterate re-enters here afterwards
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
			m.resetStateAndGeneration(out, protocol.APISyncGroup, "generation reset before onJoinComplete")
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
				m.resetStateAndGeneration(out, protocol.APIJoinGroup, err.String())
			}
			switch {
			case !m.cfg.behaviour.nonBlockingJoin:
				// Timer.sleep(retry.backoff.ms): the thread sleeps, handling nothing.
				m.app.startBusy(now, m.cfg.RetryBackoff, contResume)
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
// JoinGroup+SyncGroup (joinFuture) at a time; then sendJoinGroupRequest.
func (m *Member) initiateJoinGroup(now protocol.Instant, out *Output) {
	if m.join.status != joinIdle {
		return
	}
	m.join.retryAt = 0
	m.becomePreparingRebalance(out)
	m.join.status = joinWaiting
	if !m.coord.known {
		m.failJoin(out, protocol.CoordinatorNotAvailable, failRetriable)
		return
	}
	req, timeout := m.cfg.joinGroupRequest(m.name, m.instanceID(), m.gen, m.rejoinReason, m.owned)
	m.join.joinCorr = m.send(now, out, m.coord.node, true, req, timeout)
}

// joinGroupRequest is AbstractCoordinator.sendJoinGroupRequest's request
// and timeout, with ConsumerCoordinator.metadata() as the protocol list.
func (t *template) joinGroupRequest(name, instanceID string, gen *generation, reason RejoinReason, owned []protocol.TopicPartition) (*protocol.JoinGroupRequest, time.Duration) {
	rebalanceTimeout := t.MaxPollInterval
	if t.behaviour.join.version == 0 {
		// JoinGroup v0 has no rebalance timeout; the broker uses the session timeout.
		rebalanceTimeout = t.SessionTimeout
	}
	req := &protocol.JoinGroupRequest{
		ClientID:         name,
		GroupID:          t.GroupID,
		SessionTimeout:   t.SessionTimeout,
		RebalanceTimeout: rebalanceTimeout,
		MemberID:         gen.memberID(),
		ProtocolType:     protocol.ConsumerProtocolType,
		Version:          t.behaviour.join.version,
	}
	if t.behaviour.staticMembership {
		req.GroupInstanceID = instanceID
	}
	if t.behaviour.join.reason {
		req.Reason = reason.String()
	}
	req.Protocols = t.groupProtocols(owned, gen.id())
	var timeout time.Duration
	const lapse = 5 * time.Second // JOIN_GROUP_TIMEOUT_LAPSE
	switch t.behaviour.join.timeout {
	case joinTimeoutRequest:
		timeout = t.RequestTimeout
	case joinTimeoutRebalance:
		timeout = rebalanceTimeout + lapse
	case joinTimeoutMaxOfRequestAnd:
		timeout = max(t.RequestTimeout, rebalanceTimeout+lapse)
	}
	return req, timeout
}

// groupProtocols is ConsumerCoordinator.metadata(): one protocol per
// configured assignor, each with the member's subscription (topics, owned
// partitions from 2.4, generation genID from 3.x's subscription v2).
//
// A subscription without owned partitions is the same for every member of
// the template that joins at the same generation (a whole eager group after
// its revocation, every first join): that list is built once and shared by
// them and by the coordinator that keeps it (176 bytes a member at two
// assignors, at 100,000 members). It is never changed in place (nothing
// writes a request's protocols), so sharing it changes no output.
func (t *template) groupProtocols(owned []protocol.TopicPartition, genID int32) []protocol.GroupProtocol {
	sub := protocol.Subscription{Topics: t.Topics, GenerationID: protocol.NoGeneration}
	if t.behaviour.ownedInSubscription() && len(owned) > 0 {
		sub.OwnedPartitions = slices.Clone(owned)
	}
	if t.behaviour.subscription >= subscriptionV2 {
		sub.GenerationID = genID
	}
	shared := sub.OwnedPartitions == nil
	if c := t.sharedProtocols; shared && c != nil && c[0].Metadata.GenerationID == sub.GenerationID {
		return c
	}
	ps := make([]protocol.GroupProtocol, len(t.Assignors))
	for i, name := range t.Assignors {
		ps[i] = protocol.GroupProtocol{Name: name, Metadata: sub}
	}
	if shared && len(ps) > 0 {
		t.sharedProtocols = ps
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
	if m.join.fail(err, kind) && !m.cfg.behaviour.fourStates {
		m.becomeUnjoined(out)
	}
}

// fail fails a pending future with err (how joinGroupIfNeeded treats it:
// kind); it reports whether there was one.
func (j *joinFuture) fail(err protocol.ErrorCode, kind failKind) bool {
	if j.status != joinWaiting {
		return false
	}
	j.status = joinFailed
	j.err = err
	j.kind = kind
	j.joinCorr, j.syncCorr = 0, 0
	return true
}

// invariant is what holds of the join future between calls
// (AbstractCoordinator.joinFuture, "the future of the last JoinGroup+SyncGroup
// round trip"):
//   - one request of the round trip at a time, and only while it is
//     pending (a completed future has none in flight);
//   - a pending future is never STABLE: initiateJoinGroup sets
//     PREPARING_REBALANCE with it, and only its SyncGroup success sets
//     STABLE (a reset meanwhile makes it UNJOINED);
//   - a succeeded future is STABLE, or UNJOINED when the heartbeat thread
//     reset the generation before onJoinComplete (joinGroupIfNeeded then
//     rejoins);
//   - a failed future carries its exception; onJoinComplete runs only for a
//     succeeded one.
func (j *joinFuture) invariant(state MemberState) string {
	switch {
	case j.joinCorr != 0 && j.syncCorr != 0:
		return "a JoinGroup and a SyncGroup in flight at once"
	case j.status != joinWaiting && (j.joinCorr != 0 || j.syncCorr != 0):
		return "a request in flight for a completed join future"
	case j.status == joinWaiting && state == Stable:
		return "a pending join future in STABLE"
	case j.status == joinSucceeded && state != Stable && state != Unjoined:
		return "a succeeded join future in " + state.String()
	case j.status == joinFailed && j.err == protocol.None:
		return "a failed join future without an error"
	case j.complete != jcNone && j.status != joinSucceeded:
		return "onJoinComplete under way without a succeeded join future"
	}
	return ""
}

// onJoinPrepare is ConsumerCoordinator.onJoinPrepare after its auto-commit
// (joinPrepareCommit): lost (generation or member id reset, 2.4+; gen is the
// generation onJoinPrepare was called with), else EAGER revokes everything
// and COOPERATIVE revokes only partitions of unsubscribed topics (never,
// here). It reports whether a callback now keeps the application busy.
func (m *Member) onJoinPrepare(now protocol.Instant, out *Output, gen generation) bool {
	m.meta.onJoinPrepare()
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
	m.meta.onJoinComplete()
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
		m.autoCommit.reschedule(now, m.cfg)
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
func (b *behaviour) protocolTypeInconsistent(protocolType string) bool {
	return b.protocolTypeChecked && protocolType != "" && protocolType != protocol.ConsumerProtocolType
}

// handleJoinGroup is JoinGroupResponseHandler.handle (§5.6).
func (m *Member) handleJoinGroup(now protocol.Instant, out *Output, e inflight, r *protocol.JoinGroupResponse) {
	if e.Corr != m.join.joinCorr || m.join.status != joinWaiting {
		return
	}
	m.join.joinCorr = 0
	switch r.Error {
	case protocol.None:
		if m.cfg.behaviour.protocolTypeInconsistent(r.ProtocolType) {
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
			// onJoinFollower: an empty SyncGroup.
			m.sendSyncGroupRequest(now, out, m.cfg.syncGroupRequest(m.gen, m.instanceID(), nil))
		}
	case protocol.CoordinatorLoadInProgress:
		m.failJoin(out, r.Error, failRetriable)
	case protocol.UnknownMemberID:
		if m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			m.resetStateOnResponseError(out, protocol.APIJoinGroup, r.Error, RejoinUnknownMemberID)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, r.Error)
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

// syncGroupRequest is the SyncGroup request of generation g
// (AbstractCoordinator.onJoinFollower, onLeaderElected).
func (t *template) syncGroupRequest(g *generation, instanceID string, assignments []protocol.SyncGroupAssignment) *protocol.SyncGroupRequest {
	req := &protocol.SyncGroupRequest{
		GroupID: t.GroupID, GenerationID: g.id(), MemberID: g.memberID(),
		Assignments: assignments,
	}
	if t.behaviour.staticMembership {
		req.GroupInstanceID = instanceID
	}
	if t.behaviour.protocolTypeChecked {
		req.ProtocolType = protocol.ConsumerProtocolType
		req.ProtocolName = g.protocol
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
	m.meta.takeAssignmentSnapshot()
	if r.SkipAssignment {
		m.sendSyncGroupRequest(now, out, m.cfg.syncGroupRequest(m.gen, m.instanceID(), nil))
		return
	}
	assignments, ok := m.cfg.performAssignment(r, m.meta.topicMetadata(m.cfg))
	if !ok {
		// IllegalStateException: the coordinator selected an unknown protocol.
		m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
		return
	}
	req := m.cfg.syncGroupRequest(m.gen, m.instanceID(), assignments)
	if d := m.cfg.AssignTime.Draw(m.rng); d > 0 && m.onApp {
		m.app.pendingSync = req
		m.app.startBusy(now, d, contLeaderSync)
		return
	}
	m.sendSyncGroupRequest(now, out, req)
}

// performAssignment is ConsumerCoordinator.onLeaderElected's
// (performAssignment's) assignor run over the JoinGroup response's members
// on the leader's metadata topics; false when the coordinator selected a
// protocol no configured assignor has.
func (t *template) performAssignment(r *protocol.JoinGroupResponse, topics []assign.Topic) ([]protocol.SyncGroupAssignment, bool) {
	a, ok := t.lookup(r.ProtocolName)
	if !ok {
		return nil, false
	}
	if !t.behaviour.stickyClaimsAllGenerations {
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
	result := a.Assign(members, topics)
	assignments := make([]protocol.SyncGroupAssignment, len(members))
	for i := range members {
		var parts []protocol.TopicPartition
		if i < len(result) {
			parts = result[i]
		}
		assignments[i] = protocol.SyncGroupAssignment{MemberID: members[i].ID, Assignment: protocol.Assignment{Partitions: parts}}
	}
	return assignments, true
}

// handleSyncGroup is SyncGroupResponseHandler.handle (§5.7).
func (m *Member) handleSyncGroup(now protocol.Instant, out *Output, e inflight, r *protocol.SyncGroupResponse) {
	if e.Corr != m.join.syncCorr || m.join.status != joinWaiting {
		return
	}
	m.join.syncCorr = 0
	switch r.Error {
	case protocol.None:
		if m.cfg.behaviour.protocolTypeInconsistent(r.ProtocolType) {
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
			m.resetStateKeepingMemberID(out, protocol.APISyncGroup, r.Error.String())
			m.requestRejoin(out, RejoinRebalanceInProgress)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.UnknownMemberID:
		if m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			m.resetStateOnResponseError(out, protocol.APISyncGroup, r.Error, RejoinUnknownMemberID)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.IllegalGeneration:
		if m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			m.resetStateOnResponseError(out, protocol.APISyncGroup, r.Error, RejoinIllegalGeneration)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, r.Error)
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
