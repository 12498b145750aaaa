package client

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is the application thread: KafkaConsumer.poll, ConsumerCoordinator
// .poll, the rebalance-listener callbacks and maybeLeaveGroup. It calls into
// the coordinator lookup (lookup.go), the join future (join.go) and
// auto-commit (commit.go).

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
	for range maxPollPasses {
		if m.app.phase != appPolling || m.stopped {
			return
		}
		m.onApp = true
		if m.app.closing != closeNone {
			m.closeIterate(now, out) // inside close(), not poll()
			return
		}
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
	if m.prepActive() && !m.cfg.behaviour.asyncJoinPrepareCommit && m.rejoinNeededOrPending() {
		return true // ≤3.1: onJoinPrepare's synchronous auto-commit
	}
	return m.cfg.behaviour.blockingJoin && (m.rejoinNeededOrPending() || !m.coord.known)
}

// recordsAvailable: the fetch would return records. They are always waiting
// for owned partitions. From 2.5 (KAFKA-8421) poll(Duration) returns records
// of still-owned partitions while a rebalance is pending (COOPERATIVE keeps
// them); before, poll() returned nothing until the join completed.
func (m *Member) recordsAvailable() bool {
	if len(m.owned) == 0 || m.prepBlocksRecords() {
		return false
	}
	if m.cfg.behaviour.nonBlockingJoin {
		return true
	}
	return m.coord.known && !m.rejoinNeededOrPending()
}

// nextPollingDeadline is the next instant the application thread, blocked
// inside poll(), has something to do.
func (m *Member) nextPollingDeadline() protocol.Instant {
	if m.app.closing != closeNone {
		return m.nextClosingDeadline()
	}
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
		if req == nil {
			m.assertFailed(out, "app", "the assignor finished without a SyncGroup to send")
			return
		}
		m.sendSyncGroupRequest(now, out, req)
	case contJoinComplete:
		m.continueJoinComplete(now, out)
	case contResume, contNone:
	}
	if m.app.phase == appPolling {
		m.appIterate(now, out)
	}
}

// coordinatorPoll is ConsumerCoordinator.poll for a subscribed consumer:
// the metadata refresh (only with a changing Cluster, metadata.go),
// coordinator, join, then (2.x+) the async auto-commit once
// ensureActiveGroup succeeded. The 0.10 AutoCommitTask runs with the
// delayed tasks instead (heartbeatTask.pollTasks).
func (m *Member) coordinatorPoll(now protocol.Instant, out *Output) {
	m.maybeUpdateMetadata(now)
	if !m.checkCoordinator(now, out) && !m.ensureCoordinatorReady(now, out) {
		return
	}
	if m.metadataChanged(out) || m.rejoinNeededOrPending() {
		// ensureActiveGroup: startHeartbeatThreadIfNeeded (the thread is
		// implicit) then joinGroupIfNeeded with a zero timer (2.5+), the
		// user's timer (2.3/2.4) or no timer (0.10).
		m.joinGroupIfNeeded(now, out)
		if m.rejoinNeededOrPending() || m.app.phase != appPolling || m.stopped {
			return // ensureActiveGroup returned false
		}
	}
	if !m.cfg.behaviour.commit010 {
		m.maybeAutoCommitOffsetsAsync(now, out)
	}
}

// invokeCallback runs a rebalance-listener callback (only for a non-empty
// set). It takes cfg.CallbackTime; the ownership change is applied when it
// returns. It reports whether the application is now busy.
func (m *Member) invokeCallback(now protocol.Instant, out *Output, kind cbKind, parts []protocol.TopicPartition, cont appCont) bool {
	if len(parts) == 0 {
		return false
	}
	p := new([]protocol.TopicPartition)
	*p = parts
	m.app.cb, m.app.cbParts = kind, p
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
	kind, parts := m.app.cb, []protocol.TopicPartition(nil)
	if m.app.cbParts != nil {
		parts = *m.app.cbParts
	}
	m.app.cb, m.app.cbParts = cbNone, nil
	switch kind {
	case cbRevoked, cbLost:
		m.owned = subtract(m.owned, parts)
		detail := "revoked"
		if kind == cbLost {
			detail = "lost"
		}
		m.emit(out, protocol.Event{Kind: protocol.EvRevoked, Detail: detail, Partitions: parts, Gen: m.gen.id(), Count: int32(len(parts))})
	case cbAssigned:
		// Shared, not copied: neither list is ever changed in place (each is
		// replaced whole: a new SyncGroup assignment, subtract), so the owned
		// set and the join's assignment can be one array (issue 15: memory
		// per member).
		m.owned = m.join.assignment
		m.emit(out, protocol.Event{Kind: protocol.EvAssigned, Partitions: m.owned, Gen: m.gen.id(), Count: int32(len(m.owned))})
	case cbNone:
	}
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
	dynamic := m.instanceID() == "" || !m.cfg.behaviour.staticMembership
	hasMember := m.gen.memberID() != ""
	if m.cfg.behaviour.coordinator010 {
		hasMember = m.gen.id() > 0 // ≤0.10: coordinator known and generation > 0
	}
	detail := "not-sent"
	if dynamic && m.coord.known && m.state != Unjoined && hasMember {
		m.send(now, out, m.coord.node, true, &protocol.LeaveGroupRequest{
			GroupID: m.cfg.GroupID,
			Members: []protocol.LeaveGroupMember{{MemberID: m.gen.memberID(), Reason: reason.String()}},
		}, m.cfg.RequestTimeout)
		detail = "sent"
	}
	m.emit(out, protocol.Event{Kind: protocol.EvLeave, Reason: reason.String(), Leave: reason, Detail: detail, Gen: m.gen.id()})
	m.resetStateAndGeneration(out, protocol.APILeaveGroup, reason.String(), false)
	m.requestRejoin(out, RejoinLeftGroup)
}

// appPhase is what the application thread is doing.
type appPhase uint8

const (
	appNotStarted appPhase = iota
	appPolling             // blocked inside poll(): it handles responses as they arrive
	appBusy                // processing records, in a callback, running the assignor or sleeping a backoff
	appStopped
)

// appCont is what the application thread does when its busy period ends.
type appCont uint8

const (
	contNone         appCont = iota
	contNextPoll             // processing finished: call poll() again
	contResume               // callback or backoff sleep finished: back into the same poll() call
	contLeaderSync           // the assignor finished: send the leader's SyncGroup (monitor held until then)
	contJoinComplete         // a callback of onJoinComplete finished: continue onJoinComplete
)

// cbKind is a ConsumerRebalanceListener callback.
type cbKind uint8

const (
	cbNone cbKind = iota
	cbRevoked
	cbLost
	cbAssigned
)

// appThread is the application thread's poll loop (KafkaConsumer.poll).
type appThread struct {
	phase        appPhase
	cont         appCont          // what happens when a busy period ends
	cb           cbKind           // the callback running during a busy period
	closing      closePhase       // inside KafkaConsumer.close() (close.go)
	busyUntil    protocol.Instant // appBusy: the end of the busy period
	pollBlockEnd protocol.Instant // the current poll(Duration) call's timer
	// cbParts is the running callback's partitions, behind a pointer (nil:
	// none): set only while a callback runs, so 16 bytes of the Member are
	// not kept for it (issue 15: the Member in the 448-byte size class).
	cbParts     *[]protocol.TopicPartition
	pendingSync *protocol.SyncGroupRequest // contLeaderSync: the leader's SyncGroup
}

func (m *Member) startBusy(now protocol.Instant, d time.Duration, cont appCont) {
	m.app.phase = appBusy
	m.app.busyUntil = now.Add(max(d, 0))
	m.app.cont = cont
}

// monitorHeld: the application thread holds the coordinator monitor (the
// leader's assignor runs inside the synchronized JoinGroup handler), so the
// heartbeat thread cannot run.
func (m *Member) monitorHeld() bool { return m.app.phase == appBusy && m.app.cont == contLeaderSync }
