package client

import (
	"github.com/rebalsim/rebalsim/model/protocol"
)

// heartbeatThread is AbstractCoordinator.HeartbeatThread (0.10.1+, KIP-62):
// a background thread that heartbeats while the application thread is busy,
// and enforces max.poll.interval.ms (§8.2).
type heartbeatThread struct {
	m *Member
	// waitUntil is the end of the thread's retry.backoff.ms wait after a
	// lookup pass: the next pass while the coordinator is unknown, and the
	// wake-up that checks a coordinator found meanwhile (networkPolled);
	// or the wake-up that reads the network events that arrived while the
	// thread was asleep (awake). Zero once a wake-up found the coordinator
	// known.
	waitUntil protocol.Instant
	wakeBase  protocol.Instant // HeartbeatWakeCadence: one wake-up instant of the grid
	// The thread's failure and enabled flag are Member.hb.threadFailed
	// and threadEnabled (in heartbeat's padding).
}

// enable is HeartbeatThread.enable: timers restart from now.
func (t *heartbeatThread) enable(now protocol.Instant) {
	m := t.m
	t.m.hb.threadEnabled = true
	m.hb.resetTimeouts(now, m.cfg)
	// HeartbeatThread.enable @3.9.0-rc3 (AbstractCoordinator.java:1448-1454,
	// the same since 0.10.1) notifies the thread, which wakes from its
	// wait() and goes round into wait(retry.backoff.ms): the grid restarts
	// at the instant the thread is enabled (hbgrid.go).
	t.restartGrid(now)
}

func (t *heartbeatThread) disable()                            { t.m.hb.threadEnabled = false }
func (t *heartbeatThread) polled(now protocol.Instant)         { t.m.hb.poll(now, t.m.cfg) }
func (t *heartbeatThread) failure() protocol.ErrorCode         { return t.m.hb.threadFailed }
func (t *heartbeatThread) taskDeadline() protocol.Instant      { return protocol.Never }
func (t *heartbeatThread) pollTasks(protocol.Instant, *Output) {}
func (t *heartbeatThread) reset(protocol.Instant)              {}
func (t *heartbeatThread) requestFailed(now protocol.Instant) {
	t.m.hb.failHeartbeat(now, t.m.cfg, t.m.rng)
}

// canPoll: the heartbeat thread is enabled and can take the monitor.
func (t *heartbeatThread) canPoll() bool {
	return t.m.hb.threadEnabled && t.m.hb.threadFailed == protocol.None && !t.m.app.monitorHeld()
}

// tick runs the HeartbeatThread loop (§8.2) for everything expired up to
// now. The Java thread wakes on a retry.backoff.ms cadence or when notified;
// the simulator fires exactly at each deadline (doc.go).
func (t *heartbeatThread) tick(now protocol.Instant, out *Output) {
	m := t.m
	m.app.fastForward(m, now, false)
	if !t.canPoll() {
		return
	}
	m.onApp = false
	if !m.net.firePendingCompletions(m, now, out) {
		return
	}
	m.net.HandleTimeouts(now, out, netOwner{m}) // NetworkClient.handleTimedOutRequests
	for range maxHeartbeatPasses {
		if !t.runOnce(now, out) {
			return
		}
	}
}

// awake reports whether the thread polls the network at now, when an event
// arrives that the application thread (not inside poll()) cannot read. If
// it is asleep, the event waits in the queue for the thread's next wake-up,
// which waitUntil then holds (nextDeadline, tick).
//
// Kafka: AbstractCoordinator.HeartbeatThread.run @3.9.0-rc3 1480-1527 (the
// newest 3.9 tag to hand; the same loop from 0.10.1 and in 4.x's
// ClassicKafkaConsumer, doc.go "Deviations"; @3.7.0, after KIP-580, too): each iteration reads the network only in
// client.pollNoWakeup() (1501), then, with no heartbeat due, goes into
// AbstractCoordinator.this.wait(rebalanceConfig.retryBackoffMs) (1527; also at
// once after sending one: the next iteration's !heartbeat.shouldHeartbeat
// branch). A response that arrives during that wait stays in the
// ConsumerNetworkClient until a thread polls it: the heartbeat thread when
// the wait ends (retry.backoff.ms, never retry.backoff.max.ms, in every
// profile with the thread; 0.10's HeartbeatTask runs inside poll() only and
// never gets here, canPoll) or when notified (enable, restartGrid), or the
// application thread's next poll(). The wait's end is the thread's grid of
// wake-ups (hbgrid.go: retry.backoff.ms plus overshoot after it last went to
// wait) or the end of a lookup pass's wait (waitUntil). So a member busy
// processing reads its heartbeat's REBALANCE_IN_PROGRESS one wait after the
// send (measured: 0.10 s, cal-join-nodelay 4.4.0 initial_join_ms, all five
// repetitions; TestHeartbeatResponseReadAtWakeUp). Without
// HeartbeatWakeCadence the thread has no wait to model and reads at once.
func (t *heartbeatThread) awake(now protocol.Instant) bool {
	if !t.m.cfg.Sim.HeartbeatWakeCadence {
		return true
	}
	if !t.m.coord.known {
		return now >= t.waitUntil // its wait is a lookup pass's (runOnce)
	}
	at := t.waitUntil
	if at <= now {
		at = t.wake(now)
	}
	if at <= now {
		return true
	}
	t.waitUntil = at
	return false
}

// networkPolled is the rest of the HeartbeatThread.run iteration whose
// pollNoWakeup handled the events that just arrived.
//
// Kafka: AbstractCoordinator.HeartbeatThread.run @3.7.0 1490-1493 (the same
// loop from 0.10.1.0): client.pollNoWakeup(), then coordinatorUnknown() →
// checkAndGetCoordinator, whose isUnavailable marks a coordinator whose
// connection is in reconnect backoff unknown (a broker that crashed: its
// connection's close puts it in backoff, ClusterConnectionStates
// .disconnected). The session, poll and heartbeat branches fire at their own
// deadlines (tick), and a coordinator marked unknown moves the thread's
// deadline to its lookup pass (nextDeadline). Without this check the mark
// waited for the next poll() or heartbeat deadline, and a poll replayed
// lazily (lazy.go) never made it, so a crashed coordinator's backoff could
// end before the member noticed (TestHeartbeatThreadChecksCoordinatorAfterNetworkPoll).
//
// After a lookup pass the Java thread sleeps retry.backoff.ms (1502) and
// does not poll the network. With HeartbeatWakeCadence the events wait in
// the queue for that wake-up (awake); without it the model hands them over
// at once (doc.go, "Which thread") but leaves the check to the wake-up at
// waitUntil, as Java's next iteration. Either way a FindCoordinator response
// read there finds a reconnect backoff shorter than retry.backoff.ms over,
// and is not marked unknown again at once (gc-pause: 2.1 → 1.05 coordinator-
// dead marks a run over seeds 1–20 since the events wait).
func (t *heartbeatThread) networkPolled(now protocol.Instant, out *Output) {
	if t.m.stopped || now < t.waitUntil {
		return
	}
	t.m.checkCoordinator(now, out)
}

// nextDeadline is the thread's next timer, or protocol.Never.
func (t *heartbeatThread) nextDeadline() protocol.Instant {
	m := t.m
	if !t.m.hb.threadEnabled {
		return protocol.Never
	}
	var d protocol.Instant
	if !m.coord.known {
		d = t.waitUntil
	} else {
		d = min(m.hb.sessionDeadline, m.hb.heartbeatDeadline)
		if m.app.phase != appPolling {
			d = min(d, m.hb.pollDeadline)
		}
		d = t.wake(d)
		if t.waitUntil != 0 {
			d = min(d, t.waitUntil) // the wake-up after a lookup pass (networkPolled)
		}
	}
	d = min(d, m.net.nextDeadline(m.cfg))
	if m.app.monitorHeld() {
		// The application thread holds the coordinator lock (the leader's
		// assignor runs inside the JoinGroup handler): the heartbeat thread
		// can do nothing until it is released, and the harness re-reads
		// this deadline after the application tick that releases it.
		// (Returning the end of the assignor run here livelocked: the
		// heartbeat tick at that instant could not poll and re-armed itself
		// ahead of the application tick.)
		return protocol.Never
	}
	return d
}

// runOnce is one iteration of HeartbeatThread.run (3.6.1, §8.2, with the
// profile's lookup pacing). It reports whether the loop should go round again
// at once (Java: no wait in that branch).
func (t *heartbeatThread) runOnce(now protocol.Instant, out *Output) bool {
	m := t.m
	if !t.m.hb.threadEnabled || m.stopped {
		return false
	}
	if (m.cfg.behaviour.fourStates && m.state.hasNotJoinedGroup()) || (!m.cfg.behaviour.fourStates && m.state != Stable) || t.m.hb.threadFailed != protocol.None {
		t.m.hb.threadEnabled = false
		return false
	}
	if !m.checkCoordinator(now, out) {
		if now < t.waitUntil {
			return false
		}
		switch m.cfg.behaviour.pacing {
		case pacing23:
			if m.coord.findCorr == 0 {
				m.lookupCoordinator(now, out)
			}
		case pacing28:
			if m.coord.findCorr == 0 && m.coord.stale == findStaleNone {
				m.lookupCoordinator(now, out)
				return true // loop without waiting: the next pass forgets it and waits
			}
			// its response is still handled.
			m.coord.clearFindCoordinatorFuture()
		case pacing33:
			// AbstractCoordinator 3.7.0 1493-1502: a referenced future (in
			// flight, or completed: the response handler no longer clears
			// it) is cleared and waited on; the next pass sends. So with
			// responses faster than retry.backoff.ms a lookup goes out every
			// 2 x retry.backoff.ms.
			if m.coord.findCorr != 0 || m.coord.stale != findStaleNone {
				m.coord.clearFindCoordinatorFuture()
			} else {
				m.lookupCoordinator(now, out)
			}
		}
		t.waitUntil = now.Add(m.cfg.RetryBackoff + m.cfg.Sim.WaitOvershoot)
		return false
	}
	if now >= t.waitUntil {
		t.waitUntil = 0 // awake, the coordinator known (networkPolled)
	}
	if m.cfg.Sim.HeartbeatWakeCadence {
		// The thread acts at its first wake-up at or after the earliest
		// deadline (after a pause: at once, its wait timed out).
		d := min(m.hb.sessionDeadline, m.hb.heartbeatDeadline)
		if m.app.phase != appPolling {
			d = min(d, m.hb.pollDeadline)
		}
		if now < t.wake(d) {
			return false
		}
	}
	if now >= m.hb.sessionDeadline {
		// The client-side session expired without a successful heartbeat
		// response: the "false coordinator dead" path (generation kept).
		m.markCoordinatorUnknown(now, out, deadSessionTimeout, protocol.None)
		return true
	}
	if m.app.phase != appPolling && now >= m.hb.pollDeadline {
		// handlePollTimeoutExpiry: max.poll.interval.ms since the last poll().
		m.emit(out, protocol.Event{Kind: protocol.EvPollTimeout, Gen: m.gen.id()})
		m.maybeLeaveGroup(now, out, protocol.LeavePollTimeout)
		return true
	}
	if now < m.hb.heartbeatDeadline {
		return false
	}
	m.hb.sentHeartbeat(now, m.cfg)
	// sendHeartbeatRequest.
	m.send(now, out, m.coord.node, true, m.gen.heartbeatRequest(m.cfg, m.instanceID()), m.cfg.RequestTimeout)
	t.restartGrid(now)
	return false
}

// wake is the first wake-up of the heartbeat thread at or after d with
// HeartbeatWakeCadence (a grid of retry.backoff.ms plus the wait's
// overshoot through wakeBase, restarted at each heartbeat sent: hbgrid.go),
// else d itself.
func (t *heartbeatThread) wake(d protocol.Instant) protocol.Instant {
	step := t.gridStep()
	if !t.m.cfg.Sim.HeartbeatWakeCadence || d == protocol.Never || step <= 0 {
		return d
	}
	off := (d - t.wakeBase) % step
	if off < 0 {
		off += step
	}
	if off == 0 {
		return d
	}
	return d + step - off
}

// hbOutcome is what the HeartbeatThread's future listener does.
type hbOutcome uint8

const (
	hbReceived hbOutcome = iota // receiveHeartbeat (success, or REBALANCE_IN_PROGRESS)
	hbFailed                    // failHeartbeat: retry after backoff
	hbFenced                    // FencedInstanceIdException: thread failure, thrown to the application
)

// handleResponse is HeartbeatResponseHandler.handle plus the
// HeartbeatThread's listener (2.x/3.x, §8.3).
func (t *heartbeatThread) handleResponse(now protocol.Instant, out *Output, e inflight, err protocol.ErrorCode) {
	m := t.m
	outcome := hbFailed
	switch err {
	case protocol.None:
		outcome = hbReceived
	case protocol.CoordinatorNotAvailable, protocol.NotCoordinator:
		m.markCoordinatorUnknown(now, out, protocol.DeadErrorResponse, err)
	case protocol.RebalanceInProgress:
		// 2.6.1+: only a STABLE member rejoins; in COMPLETING_REBALANCE the
		// error is ignored. Either way the listener counts it as liveness.
		if !m.cfg.behaviour.fourStates || m.state == Stable {
			m.requestRejoin(out, RejoinRebalanceInProgress)
		}
		outcome = hbReceived
	case protocol.IllegalGeneration:
		if m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			m.resetStateOnResponseError(out, protocol.APIHeartbeat, err, RejoinIllegalGeneration)
		} else {
			outcome = hbReceived
		}
	case protocol.UnknownMemberID:
		if m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			m.resetStateOnResponseError(out, protocol.APIHeartbeat, err, RejoinUnknownMemberID)
		} else {
			outcome = hbReceived
		}
	case protocol.FencedInstanceID:
		if m.gen.unchangedSince(e.Data.sentGen, m.cfg.behaviour) {
			m.resetStateOnResponseError(out, protocol.APIHeartbeat, err, RejoinFencedInstanceID)
			outcome = hbFenced
		} else {
			outcome = hbReceived
		}
	case protocol.GroupAuthorizationFailed:
		// raised to the listener, which only calls failHeartbeat.
	case protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.CoordinatorLoadInProgress, protocol.InconsistentGroupProtocol, protocol.InvalidGroupID,
		protocol.InvalidSessionTimeout, protocol.InvalidCommitOffsetSize, protocol.UnsupportedVersion,
		protocol.GroupIDNotFound, protocol.MemberIDRequired, protocol.GroupMaxSizeReached,
		protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower, protocol.UnknownTopicOrPartition,
		protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
		// KafkaException "unexpected error": failHeartbeat.
	default:
	}
	switch outcome {
	case hbReceived:
		m.hb.receiveHeartbeat(now, m.cfg)
	case hbFailed:
		m.hb.failHeartbeat(now, m.cfg, m.rng)
	case hbFenced:
		t.m.hb.threadFailed = err
		t.m.hb.threadEnabled = false
		if m.onApp && m.app.phase == appPolling {
			m.fatal(out, err, "heartbeat")
		}
	}
}
