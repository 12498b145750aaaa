package client

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file holds the response handlers (AbstractCoordinator's
// FindCoordinatorResponseHandler, JoinGroupResponseHandler,
// SyncGroupResponseHandler, HeartbeatResponseHandler, LeaveGroupResponseHandler
// and CoordinatorResponseHandler.onFailure). Every ErrorCode is listed
// explicitly; codes outside protocol.AllErrorCodes fall through to the
// "unexpected" branch after the switch.

// handleResponse dispatches one response on the current thread. Responses
// whose correlation id is no longer in flight (timed out, disconnected) are
// ignored, as NetworkClient drops them with the connection.
func (m *Member) handleResponse(now protocol.Instant, out *Output, corr uint64, resp protocol.Response) {
	idx := -1
	for i := range m.net.inflight {
		if m.net.inflight[i].corr == corr {
			idx = i
			break
		}
	}
	if idx < 0 {
		return
	}
	e := m.net.inflight[idx]
	m.net.inflight = slices.Delete(m.net.inflight, idx, idx+1)
	if resp.API() != e.api {
		m.assertFailed(out, "net", "response "+resp.API().String()+" for a "+e.api.String()+" request")
		return
	}
	switch r := resp.(type) {
	case *protocol.FindCoordinatorResponse:
		m.handleFindCoordinator(now, out, e, r)
	case *protocol.JoinGroupResponse:
		m.handleJoinGroup(now, out, e, r)
	case *protocol.SyncGroupResponse:
		m.handleSyncGroup(now, out, e, r)
	case *protocol.HeartbeatResponse:
		m.hbt.handleResponse(now, out, e, r.Error)
	case *protocol.LeaveGroupResponse:
		// LeaveGroupResponseHandler only logs: leaving is fire-and-forget.
	case *protocol.OffsetCommitResponse:
		m.commitCompleted(now, out, e, m.handleOffsetCommit(now, out, e, r.Error))
	default:
		m.assertFailed(out, "net", "unknown response type for "+resp.API().String())
	}
}

// onRequestFailure is CoordinatorResponseHandler.onFailure: for a
// DisconnectException (disconnect, request timeout) the coordinator is
// marked unknown (AbstractCoordinator 3.7.0 ~1286-1291), then the request's
// future fails (retriable). An unsent request that expired fails with a
// TimeoutException, which marks nothing (disconnect false).
func (m *Member) onRequestFailure(now protocol.Instant, out *Output, e inflight, disconnect bool) {
	err := protocol.NetworkException
	if !disconnect {
		err = protocol.RequestTimedOut
	}
	if disconnect && e.api != protocol.APIFindCoordinator && e.api != protocol.APILeaveGroup {
		m.markCoordinatorUnknown(now, out, deadDisconnect, protocol.None, true)
	}
	switch e.api {
	case protocol.APIFindCoordinator:
		m.findCoordinatorFailed(now, m.findDone(e.corr, true))
	case protocol.APIJoinGroup:
		if e.corr == m.join.joinCorr {
			m.failJoin(out, err, failRetriable)
		}
	case protocol.APISyncGroup:
		if e.corr == m.join.syncCorr {
			m.failJoin(out, err, failRetriable)
		}
	case protocol.APIHeartbeat:
		m.hbt.requestFailed(now)
	case protocol.APIOffsetCommit:
		m.commitCompleted(now, out, e, commitRetriable)
	case protocol.APILeaveGroup:
	}
}

// handleFindCoordinator is FindCoordinatorResponseHandler: success records
// the coordinator and resets the client-side session timer.
func (m *Member) handleFindCoordinator(now protocol.Instant, out *Output, e inflight, r *protocol.FindCoordinatorResponse) {
	current := m.findDone(e.corr, r.Error != protocol.None)
	switch r.Error {
	case protocol.None:
		m.coord.known = true
		m.coord.node = r.NodeID
		m.coord.attempts = 0
		m.coord.retryAt = 0
		m.emit(out, protocol.Event{Kind: protocol.EvCoordinatorFound, Peer: brokerName(r.NodeID), Gen: m.gen.id})
		m.tryConnect(now, out, r.NodeID)
		m.hbResetSession(now)
		m.hbt.coordinatorFound(now)
	case protocol.GroupAuthorizationFailed:
		// GroupAuthorizationException thrown from ensureCoordinatorReady (or
		// recorded by the heartbeat thread and thrown at the next poll).
		m.fatal(out, r.Error, "find-coordinator")
	case protocol.RequestTimedOut, protocol.NetworkException, protocol.CoordinatorLoadInProgress,
		protocol.CoordinatorNotAvailable, protocol.NotCoordinator, protocol.NotEnoughReplicas,
		protocol.NotEnoughReplicasAfterAppend, protocol.NotLeaderOrFollower,
		protocol.UnknownTopicOrPartition, protocol.KafkaStorageError:
		m.findCoordinatorFailed(now, current)
	case protocol.UnknownServerError, protocol.IllegalGeneration, protocol.InconsistentGroupProtocol,
		protocol.InvalidGroupID, protocol.UnknownMemberID, protocol.InvalidSessionTimeout,
		protocol.RebalanceInProgress, protocol.InvalidCommitOffsetSize, protocol.UnsupportedVersion,
		protocol.GroupIDNotFound, protocol.MemberIDRequired, protocol.GroupMaxSizeReached,
		protocol.FencedInstanceID:
		m.fatal(out, r.Error, "find-coordinator")
	default:
		m.fatal(out, r.Error, "find-coordinator")
	}
}

// findStale is a completed findCoordinatorFuture still referenced by the
// findCoordinatorFuture field.
type findStale uint8

const (
	findStaleNone   findStale = iota
	findStaleDone             // completed successfully
	findStaleFailed           // failed (retriable)
)

// findDone is the completion of the lookup sent as corr; it reports whether
// that lookup is the current findCoordinatorFuture. Up to 2.7 the response
// handler clears the field (clearFindCoordinatorFuture in
// FindCoordinatorResponseHandler, 2.3.0 714/743); from 2.8 only
// ensureCoordinatorReady (the application thread, after each attempt) and
// the heartbeat thread clear it (AbstractCoordinator 3.7.0 913-958 never
// does), so a lookup completed on the heartbeat thread stays referenced.
func (m *Member) findDone(corr uint64, failed bool) bool {
	if corr == 0 || corr != m.coord.findCorr {
		return false
	}
	m.coord.findCorr = 0
	if !m.onApp && m.b.pacing != pacing23 {
		m.coord.stale = findStaleDone
		if failed {
			m.coord.stale = findStaleFailed
		}
	}
	return true
}

// findCoordinatorFailed: a retriable lookup failure. If the application
// thread is inside ensureCoordinatorReady waiting for this lookup, it sleeps
// before the next attempt: ≤3.6 the wait for a metadata refresh (rate-limited
// to one per retry.backoff.ms, modelled as retry.backoff.ms); 3.7+ first
// retryBackoff.backoff(attempts++) with attempts a local of that call
// (AbstractCoordinator 3.7.0 281-300), so the sleep restarts at the base in
// every poll() (newPollCall). Both are bounded by the poll() timer: the next
// poll() call looks up at once. A failure handled by the heartbeat thread
// does not pace the application thread (the heartbeat thread waits
// retry.backoff.ms itself, heartbeatThread.runOnce).
func (m *Member) findCoordinatorFailed(now protocol.Instant, current bool) {
	if !current || !m.onApp {
		return
	}
	m.coord.retryAt = now.Add(m.findBackoff())
}

// findBackoff is the application thread's sleep after a failed lookup.
func (m *Member) findBackoff() time.Duration {
	if !m.b.exponentialBackoff {
		return m.cfg.RetryBackoff
	}
	d := exponentialBackoff(m.cfg.RetryBackoff, m.cfg.RetryBackoffMax, m.coord.attempts, m.rng)
	m.coord.attempts++
	return d
}

// generationUnchanged is CoordinatorResponseHandler.generationUnchanged; before
// 2.6 (KAFKA-9823) responses always acted.
func (m *Member) generationUnchanged(sent generation) bool {
	return !m.b.sentGenCheck || m.gen == sent
}

// handleJoinGroup is JoinGroupResponseHandler.handle (§5.6).
func (m *Member) handleJoinGroup(now protocol.Instant, out *Output, e inflight, r *protocol.JoinGroupResponse) {
	if e.corr != m.join.joinCorr || m.join.status != joinWaiting {
		return
	}
	m.join.joinCorr = 0
	switch r.Error {
	case protocol.None:
		if m.b.protocolTypeChecked && r.ProtocolType != "" && r.ProtocolType != protocol.ConsumerProtocolType {
			m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
			return
		}
		if m.state != PreparingRebalance {
			// UnjoinedGroupException (retriable): we left meanwhile.
			m.failJoin(out, protocol.UnknownServerError, failRetriable)
			return
		}
		if m.b.fourStates {
			m.becomeCompletingRebalance(now, out)
		}
		m.gen = generation{id: r.GenerationID, memberID: r.MemberID, protocol: r.ProtocolName, hasProtocol: true}
		m.hb.req = nil
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
		if m.generationUnchanged(e.sentGen) {
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
		if m.b.joinVersion < 4 {
			m.failJoin(out, r.Error, failFatal) // not expected below v4: "unexpected error"
			return
		}
		m.gen = generation{id: protocol.NoGeneration, memberID: r.MemberID}
		m.hb.req = nil
		m.requestRejoin(out, RejoinMemberIDRequired)
		m.failJoin(out, r.Error, failImmediate)
	case protocol.RebalanceInProgress:
		if m.b.joinRebalanceInProgressRetriable {
			m.failJoin(out, r.Error, failImmediate) // KAFKA-10870 (2.8+)
		} else {
			m.failJoin(out, r.Error, failFatal) // "unexpected error"
		}
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.IllegalGeneration, protocol.InvalidCommitOffsetSize, protocol.GroupIDNotFound,
		protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower, protocol.UnknownTopicOrPartition,
		protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend:
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
		GroupID: m.cfg.GroupID, GenerationID: m.gen.id, MemberID: m.gen.memberID,
		Assignments: assignments,
	}
	if m.b.staticMembership {
		req.GroupInstanceID = m.cfg.GroupInstanceID
	}
	if m.b.protocolTypeChecked {
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
// Deviations: the cooperative-assignment validation and the leader's
// metadata snapshot are not modelled.
func (m *Member) onJoinLeader(now protocol.Instant, out *Output, r *protocol.JoinGroupResponse) {
	if r.SkipAssignment {
		m.sendSyncGroupRequest(now, out, m.syncRequest(nil))
		return
	}
	a, ok := m.lookup(r.ProtocolName)
	if !ok {
		// IllegalStateException: the coordinator selected an unknown protocol.
		m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
		return
	}
	if !m.b.stickyClaimsAllGenerations {
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
	result := a.Assign(members, m.cfg.TopicMetadata)
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
	if e.corr != m.join.syncCorr || m.join.status != joinWaiting {
		return
	}
	m.join.syncCorr = 0
	switch r.Error {
	case protocol.None:
		if m.b.protocolTypeChecked && r.ProtocolType != "" && r.ProtocolType != protocol.ConsumerProtocolType {
			m.failJoin(out, protocol.InconsistentGroupProtocol, failFatal)
			return
		}
		want := CompletingRebalance
		if !m.b.fourStates {
			want = PreparingRebalance
		}
		if m.gen.hasReset() || m.state != want {
			// Generation cleared by the heartbeat thread: ILLEGAL_GENERATION
			// makes the join loop retry at once.
			m.failJoin(out, protocol.IllegalGeneration, failImmediate)
			return
		}
		if m.b.protocolTypeChecked && r.ProtocolName != "" && r.ProtocolName != m.gen.protocol {
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
		if m.b.syncRebalanceResetsGeneration {
			// KAFKA-13891 (3.3.0–3.3.1): resetStateOnResponseError without
			// the sent-generation guard the other errors have
			// (AbstractCoordinator 3.3.1 826-830).
			m.resetStateAndRejoin(out, protocol.APISyncGroup, r.Error, true, RejoinRebalanceInProgress)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.UnknownMemberID:
		if m.generationUnchanged(e.sentGen) {
			m.resetStateAndRejoin(out, protocol.APISyncGroup, r.Error, false, RejoinUnknownMemberID)
		}
		m.failJoin(out, r.Error, failImmediate)
	case protocol.IllegalGeneration:
		if m.generationUnchanged(e.sentGen) {
			m.resetStateAndRejoin(out, protocol.APISyncGroup, r.Error, m.b.illegalGenerationKeepsID, RejoinIllegalGeneration)
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
		protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend:
		// KafkaException "Unexpected error from SyncGroup" (COORDINATOR_LOAD_IN_PROGRESS
		// included: §15).
		m.failJoin(out, r.Error, failFatal)
	default:
		m.failJoin(out, r.Error, failFatal)
	}
}

func rejoinReasonFor(err protocol.ErrorCode) RejoinReason {
	if err == protocol.IllegalGeneration {
		return RejoinIllegalGeneration
	}
	return RejoinRebalanceInProgress
}
