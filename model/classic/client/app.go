package client

import (
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is the application thread: KafkaConsumer.poll (appThread, whose
// loop calls into the Member as KafkaConsumer calls into its coordinator),
// and the coordinator's part of it: ConsumerCoordinator.poll, the
// rebalance-listener callbacks and maybeLeaveGroup, which call into the
// coordinator lookup (lookup.go), the join future (join.go) and auto-commit
// (commit.go).

// minPollTimeout keeps a zero poll.timeout from spinning in virtual time
// (deviation: Java's poll(0) returns at once and the loop calls it again).
const minPollTimeout = time.Millisecond

// pollStart is a KafkaConsumer.poll(Duration) call starting at now. The
// application thread's methods take the Member m they call into, as
// KafkaConsumer holds its coordinator (a pointer field would push the
// Member out of its size class, memberSize).
func (a *appThread) pollStart(m *Member, now protocol.Instant, out *Output) {
	a.phase = appPolling
	m.onApp = true
	a.newPollCall(now, m.cfg, m.rng)
	m.coord.newPollCall()
	a.iterate(m, now, out)
}

// newPollCall starts a KafkaConsumer.poll(Duration) call's timer (and with
// it, coordinatorLookup.newPollCall, ensureCoordinatorReady's per-call
// state).
func (a *appThread) newPollCall(now protocol.Instant, cfg *template, rng *rand.Rand) {
	a.pollBlockEnd = now.Add(max(cfg.PollTimeout.Draw(rng), minPollTimeout))
}

// iterate is one pass of KafkaConsumer.poll's loop at now: pollHeartbeat,
// the network poll (queued responses, request timeouts, 0.10 delayed tasks),
// ConsumerCoordinator.poll, then fetch: records → processing; none and the
// user timeout expired → poll() returns empty and the loop calls it again.
func (a *appThread) iterate(m *Member, now protocol.Instant, out *Output) {
	for range maxPollPasses {
		if a.phase != appPolling || m.stopped {
			return
		}
		m.onApp = true
		if a.closing != closeNone {
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
		if !m.net.firePendingCompletions(m, now, out) {
			return
		}
		m.net.HandleTimeouts(now, out, netOwner{m}) // NetworkClient.handleTimedOutRequests
		if a.phase != appPolling || m.stopped {
			return
		}
		m.hbt.pollTasks(now, out) // 0.10: HeartbeatTask and AutoCommitTask
		if a.phase != appPolling || m.stopped {
			return
		}
		m.coordinatorPoll(now, out)
		if a.phase != appPolling || m.stopped {
			return
		}
		if a.recordsAvailable(m) {
			a.startBusy(now, m.cfg.PollInterval.Draw(m.rng), contNextPoll)
			return
		}
		if now < a.pollBlockEnd || a.blockedInJoin(m) {
			return
		}
		// poll() returned nothing; the application calls it again at once.
		a.newPollCall(now, m.cfg, m.rng)
		m.coord.newPollCall()
	}
}

// blockedInJoin: poll() cannot return before the group is joined
// (kafka-0.10's blocking ensureCoordinatorReady/ensureActiveGroup).
func (a *appThread) blockedInJoin(m *Member) bool {
	if m.autoCommit.prepActive() && !m.cfg.behaviour.asyncJoinPrepareCommit && m.rejoinNeededOrPending() {
		return true // ≤3.1: onJoinPrepare's synchronous auto-commit
	}
	return m.cfg.behaviour.blockingJoin && (m.rejoinNeededOrPending() || !m.coord.known)
}

// recordsAvailable: the fetch would return records. They are always waiting
// for owned partitions. From 2.5 (KAFKA-8421) poll(Duration) returns records
// of still-owned partitions while a rebalance is pending (COOPERATIVE keeps
// them); before, poll() returned nothing until the join completed.
func (a *appThread) recordsAvailable(m *Member) bool {
	if len(m.owned) == 0 || m.autoCommit.prepBlocksRecords(m.cfg.behaviour, m.cooperative) {
		return false
	}
	if m.cfg.behaviour.nonBlockingJoin {
		return true
	}
	return m.coord.known && !m.rejoinNeededOrPending()
}

// nextPollingDeadline is the next instant the application thread, blocked
// inside poll(), has something to do.
func (a *appThread) nextPollingDeadline(m *Member) protocol.Instant {
	if a.closing != closeNone {
		return a.nextClosingDeadline(m)
	}
	d := m.net.nextDeadline(m.cfg)
	if !a.blockedInJoin(m) {
		d = min(d, a.pollBlockEnd)
	}
	if m.join.status == joinIdle && m.rejoinNeeded && m.join.retryAt != 0 && m.coord.known {
		// The join retry backoff matters only while a coordinator is known:
		// without one, coordinatorPoll stops at ensureCoordinatorReady and
		// the lookup's own deadlines wake the thread (a past joinRetryAt
		// here re-fired the thread at one instant forever).
		d = min(d, m.join.retryAt)
	}
	d = min(d, m.coord.nextRetry())
	d = min(d, m.hbt.taskDeadline())
	if m.cfg.AutoCommit {
		d = min(d, m.autoCommit.nextDeadline(m.cfg.behaviour, m.coord.known && !m.rejoinNeededOrPending()))
	}
	if m.coord.known && m.join.status == joinIdle && m.needsJoinPrepare {
		// onJoinPrepare's commit only progresses while the coordinator is
		// known and no join is under way.
		d = min(d, m.autoCommit.nextPrepDeadline())
	}
	if len(m.net.queue) > 0 {
		d = 0
	}
	return d
}

// finishBusy ends a busy period: a callback's effect is applied, then the
// continuation runs.
func (a *appThread) finishBusy(m *Member, now protocol.Instant, out *Output) {
	cont := a.cont
	a.cont = contNone
	a.phase = appPolling
	m.onApp = true
	if a.cb != cbNone {
		m.applyCallback(out)
	}
	switch cont {
	case contNextPoll:
		a.pollStart(m, now, out)
		return
	case contLeaderSync:
		req := a.pendingSync
		a.pendingSync = nil
		if req == nil {
			m.assertFailed(out, "app", "the assignor finished without a SyncGroup to send")
			return
		}
		m.sendSyncGroupRequest(now, out, req)
	case contJoinComplete:
		m.continueJoinComplete(now, out)
	case contResume, contNone:
	}
	if a.phase == appPolling {
		a.iterate(m, now, out)
	}
}

// coordinatorPoll is ConsumerCoordinator.poll for a subscribed consumer:
// the metadata refresh (only with a changing Cluster, metadata.go),
// coordinator, join, then (2.x+) the async auto-commit once
// ensureActiveGroup succeeded. The 0.10 AutoCommitTask runs with the
// delayed tasks instead (heartbeatTask.pollTasks).
func (m *Member) coordinatorPoll(now protocol.Instant, out *Output) {
	m.meta = m.meta.maybeUpdateMetadata(now, m.cfg)
	if !m.checkCoordinator(now, out) && !m.ensureCoordinatorReady(now, out) {
		return
	}
	changed := m.meta.metadataChanged()
	if changed && !m.rejoinNeeded {
		m.requestRejoin(out, RejoinMetadataChanged) // requestRejoinIfNecessary
	}
	if changed || m.rejoinNeededOrPending() {
		// ensureActiveGroup: startHeartbeatThreadIfNeeded (the thread is
		// implicit) then joinGroupIfNeeded with a zero timer (2.5+), the
		// user's timer (2.3/2.4) or no timer (0.10).
		m.joinGroupIfNeeded(now, out)
		if m.rejoinNeededOrPending() || m.app.phase != appPolling || m.stopped {
			return // ensureActiveGroup returned false
		}
	}
	if !m.cfg.behaviour.commit010 && m.autoCommit.timerExpired(now, m.cfg) {
		// maybeAutoCommitOffsetsAsync (2.x/3.x): nextAutoCommitTimer
		// expired and was reset to the interval; autoCommitOffsetsAsync.
		if corr, res := m.sendOffsetCommit(now, out, commitAuto); corr == 0 {
			m.commitCompleted(now, out, inflight{Tag: uint8(commitAuto)}, res)
		}
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
	m.app.startBusy(now, d, cont)
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
		// set and the join's assignment can be one array (one copy of the
		// assignment per member, not two).
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
	m.resetStateAndGeneration(out, protocol.APILeaveGroup, reason.String())
	m.requestRejoin(out, RejoinLeftGroup)
}

// appPhase is what the application thread is doing.
type appPhase uint8

const (
	appNotStarted appPhase = iota
	appPolling             // blocked inside poll(): it handles responses as they arrive (else the heartbeat thread reads them at its next wake-up)
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
	// none): set only while a callback runs, so the Member does not keep a
	// slice header for it (memberSize).
	cbParts     *[]protocol.TopicPartition
	pendingSync *protocol.SyncGroupRequest // contLeaderSync: the leader's SyncGroup
}

// startBusy makes the thread busy for d (processing, a callback, the
// assignor, a backoff sleep); cont is what it does when that ends.
func (a *appThread) startBusy(now protocol.Instant, d time.Duration, cont appCont) {
	a.phase = appBusy
	a.busyUntil = now.Add(max(d, 0))
	a.cont = cont
}

// monitorHeld: the application thread holds the coordinator monitor (the
// leader's assignor runs inside the synchronized JoinGroup handler), so the
// heartbeat thread cannot run.
func (a *appThread) monitorHeld() bool { return a.phase == appBusy && a.cont == contLeaderSync }

// invariant is what holds of the application thread between calls:
//   - a busy thread knows what it resumes (startBusy's cont), and only a
//     busy (or stopped) thread has one;
//   - the leader's SyncGroup waits exactly while the assignor runs
//     (AbstractCoordinator.onJoinLeader sends it when
//     onLeaderElected/performAssignment returns, inside the synchronized
//     JoinGroup handler);
//   - a rebalance-listener callback (and its partitions) is under way only
//     while the thread is busy in it (ConsumerCoordinator
//     invokePartitions*: the callback runs on the application thread).
func (a *appThread) invariant() string {
	switch {
	case a.phase == appBusy && a.cont == contNone:
		return "busy with nothing to resume"
	case a.cont != contNone && a.phase != appBusy && a.phase != appStopped:
		return "a continuation without a busy period"
	case (a.pendingSync != nil) != (a.cont == contLeaderSync):
		return "the leader's SyncGroup is not waiting exactly while the assignor runs"
	case (a.cb != cbNone) != (a.cbParts != nil):
		return "a callback without partitions"
	case a.cb != cbNone && a.phase != appBusy && a.phase != appStopped:
		return "a callback under way on a thread that is not in it"
	}
	return ""
}
