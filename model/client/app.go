package client

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is the application thread: KafkaConsumer.poll, ConsumerCoordinator
// .poll, ensureCoordinatorReady, joinGroupIfNeeded, initiateJoinGroup,
// onJoinPrepare and onJoinComplete.

// minPollTimeout keeps a zero poll.timeout from spinning in virtual time
// (deviation: Java's poll(0) returns at once and the loop calls it again).
const minPollTimeout = time.Millisecond

// pollStart is a KafkaConsumer.poll(Duration) call starting at now.
func (m *Member) pollStart(now protocol.Instant, out *Output) {
	m.app.phase = appPolling
	m.onApp = true
	m.newPollCall(now)
	m.appIterate(now, out)
}

// newPollCall starts a KafkaConsumer.poll(Duration) call: its timer, and
// ensureCoordinatorReady's per-call state: the attempts counter is a local
// of that method (AbstractCoordinator 3.7.0 281) and its sleep was bounded by
// the previous call's timer, so the first lookup of a call goes out at once.
func (m *Member) newPollCall(now protocol.Instant) {
	m.app.pollBlockEnd = now.Add(max(m.cfg.PollTimeout.Draw(m.rng), minPollTimeout))
	m.coord.attempts = 0
	m.coord.retryAt = 0
}

// appIterate is one pass of KafkaConsumer.poll's loop at now: pollHeartbeat,
// the network poll (queued responses, request timeouts, 0.10 delayed tasks),
// ConsumerCoordinator.poll, then fetch: records → processing; none and the
// user timeout expired → poll() returns empty and the loop calls it again.
func (m *Member) appIterate(now protocol.Instant, out *Output) {
	for range 16 {
		if m.app.phase != appPolling || m.stopped {
			return
		}
		m.onApp = true
		// pollHeartbeat: a failure recorded by the heartbeat thread is thrown
		// here; otherwise the poll timer restarts.
		if err := m.hbt.failure(); err != protocol.None {
			m.fatal(out, err, "heartbeat-thread")
			return
		}
		if m.autoCommit.fenced {
			// invokeCompletedOffsetCommitCallbacks: an async commit was fenced.
			m.fatal(out, protocol.FencedInstanceID, "commit")
			return
		}
		m.hbt.polled(now)
		if !m.flushQueue(now, out) {
			return
		}
		m.handleTimeouts(now, out)
		if m.app.phase != appPolling || m.stopped {
			return
		}
		m.hbt.pollTasks(now, out) // 0.10: HeartbeatTask and AutoCommitTask
		if m.app.phase != appPolling || m.stopped {
			return
		}
		m.coordinatorPoll(now, out)
		if m.app.phase != appPolling || m.stopped {
			return
		}
		if m.recordsAvailable() {
			m.startBusy(now, m.cfg.PollInterval.Draw(m.rng), contNextPoll)
			return
		}
		if now < m.app.pollBlockEnd || m.blockedInJoin() {
			return
		}
		// poll() returned nothing; the application calls it again at once.
		m.newPollCall(now)
	}
}

// blockedInJoin: poll() cannot return before the group is joined
// (kafka-0.10's blocking ensureCoordinatorReady/ensureActiveGroup).
func (m *Member) blockedInJoin() bool {
	if m.prepActive() && !m.b.asyncJoinPrepareCommit && m.rejoinNeededOrPending() {
		return true // ≤3.1: onJoinPrepare's synchronous auto-commit
	}
	return m.b.blockingJoin && (m.rejoinNeededOrPending() || !m.coord.known)
}

// recordsAvailable: the fetch would return records. They are always waiting
// for owned partitions. From 2.5 (KAFKA-8421) poll(Duration) returns records
// of still-owned partitions while a rebalance is pending (COOPERATIVE keeps
// them); before, poll() returned nothing until the join completed.
func (m *Member) recordsAvailable() bool {
	if len(m.owned) == 0 || m.prepBlocksRecords() {
		return false
	}
	if m.b.nonBlockingJoin {
		return true
	}
	return m.coord.known && !m.rejoinNeededOrPending()
}

// nextPollingDeadline is the next instant the application thread, blocked
// inside poll(), has something to do.
func (m *Member) nextPollingDeadline() protocol.Instant {
	d := m.earliestInflight()
	if !m.blockedInJoin() {
		d = min(d, m.app.pollBlockEnd)
	}
	if m.join.status == joinIdle && m.rejoinNeeded && m.join.retryAt != 0 && m.coord.known {
		// The join retry backoff matters only while a coordinator is known:
		// without one, coordinatorPoll stops at ensureCoordinatorReady and
		// the lookup's own deadlines wake the thread (a past joinRetryAt
		// here re-fired the thread at one instant forever).
		d = min(d, m.join.retryAt)
	}
	if !m.coord.known && m.coord.findCorr == 0 && m.coord.retryAt != 0 {
		d = min(d, m.coord.retryAt)
	}
	d = min(d, m.hbt.taskDeadline())
	d = min(d, m.nextAutoCommitDeadline(), m.nextPrepDeadline())
	if len(m.net.queue) > 0 {
		d = 0
	}
	return d
}

// finishBusy ends a busy period: a callback's effect is applied, then the
// continuation runs.
func (m *Member) finishBusy(now protocol.Instant, out *Output) {
	cont := m.app.cont
	m.app.cont = contNone
	m.app.phase = appPolling
	m.onApp = true
	if m.app.cb != cbNone {
		m.applyCallback(out)
	}
	switch cont {
	case contNextPoll:
		m.pollStart(now, out)
		return
	case contLeaderSync:
		req := m.app.pendingSync
		m.app.pendingSync = nil
		m.sendSyncGroupRequest(now, out, req)
	case contJoinComplete:
		m.continueJoinComplete(now, out)
	case contResume, contNone:
	}
	if m.app.phase == appPolling {
		m.appIterate(now, out)
	}
}

// coordinatorPoll is ConsumerCoordinator.poll for a subscribed consumer
// (metadata refresh not modelled): coordinator, join, then (2.x+) the async
// auto-commit once ensureActiveGroup succeeded. The 0.10 AutoCommitTask runs
// with the delayed tasks instead (heartbeatTask.pollTasks).
func (m *Member) coordinatorPoll(now protocol.Instant, out *Output) {
	if !m.checkCoordinator(now, out) && !m.ensureCoordinatorReady(now, out) {
		return
	}
	if m.rejoinNeededOrPending() {
		// ensureActiveGroup: startHeartbeatThreadIfNeeded (the thread is
		// implicit) then joinGroupIfNeeded with a zero timer (2.5+), the
		// user's timer (2.3/2.4) or no timer (0.10).
		m.joinGroupIfNeeded(now, out)
		if m.rejoinNeededOrPending() || m.app.phase != appPolling || m.stopped {
			return // ensureActiveGroup returned false
		}
	}
	if !m.b.commit010 {
		m.maybeAutoCommitOffsetsAsync(now, out)
	}
}

// ensureCoordinatorReady is AbstractCoordinator.ensureCoordinatorReady with a
// timer that does not wait: it sends a lookup if none is outstanding and the
// backoff after a failed one has passed (3.7+: exponential; earlier the
// metadata refresh rate limit, modelled as retry.backoff.ms).
func (m *Member) ensureCoordinatorReady(now protocol.Instant, out *Output) bool {
	if m.coord.known {
		return true
	}
	if m.coord.stale != findStaleNone {
		// A lookup completed on the heartbeat thread (2.8+): lookupCoordinator
		// returns that future; a failed one is slept on, then cleared.
		if m.coord.stale == findStaleFailed {
			m.coord.retryAt = now.Add(m.findBackoff())
		}
		m.coord.stale = findStaleNone
	}
	if m.coord.findCorr == 0 && now >= m.coord.retryAt {
		m.lookupCoordinator(now, out)
	}
	return false
}

// lookupCoordinator is AbstractCoordinator.lookupCoordinator: the request
// goes to the least-loaded node (netclient.go); with every broker in
// reconnect backoff it fails at once (NoAvailableBrokersException) and is
// retried after the lookup backoff.
func (m *Member) lookupCoordinator(now protocol.Instant, out *Output) {
	if m.coord.findCorr != 0 {
		return
	}
	broker := m.leastLoadedNode(now)
	if broker < 0 {
		// RequestFuture.noBrokersAvailable(): a failed future, not kept in
		// findCoordinatorFuture.
		m.findCoordinatorFailed(now, true)
		return
	}
	m.coord.retryAt = 0
	m.coord.findCorr = m.send(now, out, broker, false, &protocol.FindCoordinatorRequest{Key: m.cfg.GroupID}, m.cfg.RequestTimeout)
}

// joinGroupIfNeeded is AbstractCoordinator.joinGroupIfNeeded (3.6.1 with the
// profile's deltas, §5.4). It never blocks: "waiting" is returning and being
// re-entered by appIterate when something happens.
func (m *Member) joinGroupIfNeeded(now protocol.Instant, out *Output) {
	for range 16 {
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
			gen := m.gen
			if m.cfg.AutoCommit && !m.b.asyncJoinPrepareCommit {
				gen = m.autoCommit.prepGen // ≤3.1: arguments read before the synchronous commit
			}
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
			if m.b.retriableJoinResetsGeneration {
				// KAFKA-10134 side effect (2.6.1–2.8.0): rejoin as a new member.
				m.resetStateAndGeneration(out, protocol.APIJoinGroup, err.String(), false)
			}
			switch {
			case !m.b.nonBlockingJoin:
				// Timer.sleep(retry.backoff.ms): the thread sleeps, handling nothing.
				m.startBusy(now, m.cfg.RetryBackoff, contResume)
				return
			case m.b.joinLoopReturnsOnExpiredTimer:
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
	if m.b.joinVersion == 0 {
		// JoinGroup v0 has no rebalance timeout; the broker uses the session timeout.
		rebalanceTimeout = m.cfg.SessionTimeout
	}
	req := &protocol.JoinGroupRequest{
		ClientID:         m.cfg.Name,
		GroupID:          m.cfg.GroupID,
		SessionTimeout:   m.cfg.SessionTimeout,
		RebalanceTimeout: rebalanceTimeout,
		MemberID:         m.gen.memberID,
		ProtocolType:     protocol.ConsumerProtocolType,
		Version:          m.b.joinVersion,
	}
	if m.b.staticMembership {
		req.GroupInstanceID = m.cfg.GroupInstanceID
	}
	if m.b.rejoinReasonSent {
		req.Reason = m.rejoinReason.String()
	}
	sub := protocol.Subscription{Topics: m.cfg.Topics, GenerationID: protocol.NoGeneration}
	if m.b.ownedInSubscription && len(m.owned) > 0 {
		sub.OwnedPartitions = slices.Clone(m.owned)
	}
	if m.b.generationInSubscription {
		sub.GenerationID = m.gen.id
	}
	req.Protocols = make([]protocol.GroupProtocol, len(m.cfg.Assignors))
	for i, name := range m.cfg.Assignors {
		req.Protocols[i] = protocol.GroupProtocol{Name: name, Metadata: sub}
	}
	var timeout time.Duration
	const lapse = 5 * time.Second // JOIN_GROUP_TIMEOUT_LAPSE
	switch m.b.joinTimeout {
	case joinTimeoutRequest:
		timeout = m.cfg.RequestTimeout
	case joinTimeoutRebalance:
		timeout = rebalanceTimeout + lapse
	case joinTimeoutMaxOfRequestAnd:
		timeout = max(m.cfg.RequestTimeout, rebalanceTimeout+lapse)
	}
	m.join.joinCorr = m.send(now, out, m.coord.node, true, req, timeout)
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
	if !m.b.fourStates {
		m.becomeUnjoined(out)
	}
}

// onJoinPrepare is ConsumerCoordinator.onJoinPrepare after its auto-commit
// (joinPrepareCommit): lost (generation or member id reset, 2.4+; gen is the
// generation onJoinPrepare was called with), else EAGER revokes everything
// and COOPERATIVE revokes only partitions of unsubscribed topics (never,
// here). It reports whether a callback now keeps the application busy.
func (m *Member) onJoinPrepare(now protocol.Instant, out *Output, gen generation) bool {
	if len(m.owned) == 0 {
		return false
	}
	switch {
	case m.b.ownedInSubscription && (gen.id == protocol.NoGeneration || gen.memberID == ""):
		return m.invokeCallback(now, out, cbLost, slices.Clone(m.owned), contResume)
	case !m.cooperative:
		return m.invokeCallback(now, out, cbRevoked, slices.Clone(m.owned), contResume)
	}
	return false
}

// invokeCallback runs a rebalance-listener callback (only for a non-empty
// set). It takes cfg.CallbackTime; the ownership change is applied when it
// returns. It reports whether the application is now busy.
func (m *Member) invokeCallback(now protocol.Instant, out *Output, kind cbKind, parts []protocol.TopicPartition, cont appCont) bool {
	if len(parts) == 0 {
		return false
	}
	m.app.cb, m.app.cbParts = kind, parts
	d := m.cfg.CallbackTime.Draw(m.rng)
	if d <= 0 {
		m.applyCallback(out)
		return false
	}
	m.startBusy(now, d, cont)
	return true
}

// applyCallback applies a finished callback to the owned set and emits the
// ownership event: EvRevoked carries the removed partitions, EvAssigned the
// full owned set after the change.
func (m *Member) applyCallback(out *Output) {
	kind, parts := m.app.cb, m.app.cbParts
	m.app.cb, m.app.cbParts = cbNone, nil
	switch kind {
	case cbRevoked, cbLost:
		m.owned = subtract(m.owned, parts)
		detail := "revoked"
		if kind == cbLost {
			detail = "lost"
		}
		m.emit(out, protocol.Event{Kind: protocol.EvRevoked, Detail: detail, Partitions: parts, Gen: m.gen.id, Count: int32(len(parts))})
	case cbAssigned:
		m.owned = slices.Clone(m.join.assignment)
		m.emit(out, protocol.Event{Kind: protocol.EvAssigned, Partitions: m.owned, Gen: m.gen.id, Count: int32(len(m.owned))})
	case cbNone:
	}
}

// beginJoinComplete is ConsumerCoordinator.onJoinComplete, first half:
// COOPERATIVE revokes owned − assigned (KIP-429).
func (m *Member) beginJoinComplete(now protocol.Instant, out *Output) {
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
	m.hbt.joinCompleted(now)
}

// subtract returns a − b for sorted partition lists, as a new sorted slice
// (nil when empty).
func subtract(a, b []protocol.TopicPartition) []protocol.TopicPartition {
	var r []protocol.TopicPartition
	j := 0
	for _, p := range a {
		for j < len(b) && b[j].Less(p) {
			j++
		}
		if j < len(b) && b[j] == p {
			continue
		}
		r = append(r, p)
	}
	return r
}

// maybeLeaveGroup is AbstractCoordinator.maybeLeaveGroup: LeaveGroup only
// for a dynamic member with a known coordinator, a member id and state ≠
// UNJOINED; then always reset (member id dropped) and request a rejoin.
func (m *Member) maybeLeaveGroup(now protocol.Instant, out *Output, reason protocol.LeaveReason) {
	dynamic := m.cfg.GroupInstanceID == "" || !m.b.staticMembership
	hasMember := m.gen.memberID != ""
	if m.b.coordinator010 {
		hasMember = m.gen.id > 0 // ≤0.10: coordinator known and generation > 0
	}
	detail := "not-sent"
	if dynamic && m.coord.known && m.state != Unjoined && hasMember {
		m.send(now, out, m.coord.node, true, &protocol.LeaveGroupRequest{
			GroupID: m.cfg.GroupID,
			Members: []protocol.LeaveGroupMember{{MemberID: m.gen.memberID, Reason: reason.String()}},
		}, m.cfg.RequestTimeout)
		detail = "sent"
	}
	m.emit(out, protocol.Event{Kind: protocol.EvLeave, Reason: reason.String(), Leave: reason, Detail: detail, Gen: m.gen.id})
	m.resetStateAndGeneration(out, protocol.APILeaveGroup, reason.String(), false)
	m.requestRejoin(out, RejoinLeftGroup)
}
