package client

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is a graceful KafkaConsumer.close() (a member that stops
// without it leaves its partitions for the session timeout to free), in
// Java's order (LegacyKafkaConsumer.close, ConsumerCoordinator.close(Timer),
// AbstractCoordinator.close(Timer) @3.7.0):
//
//  1. the close timer: min(the close timeout, 30 s by default
//     (ConsumerUtils.DEFAULT_CLOSE_TIMEOUT_MS), request.timeout.ms)
//     (LegacyKafkaConsumer.createTimerForRequest @3.7.0; KafkaConsumer.close
//     @2.3.0);
//  2. maybeAutoCommitOffsetsSync(timer): with enable.auto.commit, a
//     synchronous commit of the consumed offsets (commitOffsetsSync: find
//     the coordinator, send, wait for the response; a retriable failure
//     sleeps retry.backoff.ms, from 3.7 retryBackoff.backoff(attempts++),
//     and retries while the timer runs; a non-retriable one is logged);
//     then the async commits still in flight are waited for
//     (pendingAsyncCommits); the heartbeat thread runs meanwhile;
//  3. closeHeartbeatThread();
//  4. onLeavePrepare() (2.4+, KIP-429; ConsumerCoordinator.onLeavePrepare
//     @3.7.0): the owned partitions are revoked, or lost when the
//     generation was reset or a rebalance is in progress: the callback
//     takes its callback.time, on the application thread;
//  5. maybeLeaveGroup("the consumer is being closed"): LeaveGroup unless
//     static;
//  6. awaitPendingRequests(coordinator, timer): the requests to the
//     coordinator (the LeaveGroup, a commit) are waited for until the timer
//     expires; then the member stops and its connections close.
//
// Kafka 4.1+ (KIP-1092) adds CloseOptions; the default (DEFAULT: a dynamic
// member leaves, a static one stays) is what the model does.
//
// Deviations: close() is called when the harness asks, whatever the
// application thread was doing (a callback under way is taken as finished,
// a leader's pending SyncGroup is dropped); 0.10.0's commitOffsetsSync has
// no timer and loops until done, the model bounds it by the close timer too.

// closePhase is where KafkaConsumer.close() is (closing: none before).
type closePhase uint8

const (
	closeNone     closePhase = iota
	closeCommit              // maybeAutoCommitOffsetsSync
	closeAsync               // waiting for the async commits in flight
	closeCallback            // onLeavePrepare's callback under way (the application thread busy)
	closeAwait               // LeaveGroup sent: awaitPendingRequests(coordinator, timer)
	closeShutdown            // Shutdown: close() once the step under way ends (shutdown.go)
)

// defaultCloseTimeout is ConsumerUtils.DEFAULT_CLOSE_TIMEOUT_MS (@3.7.0;
// KafkaConsumer.DEFAULT_CLOSE_TIMEOUT_MS before 3.7): close() without an
// argument.
const defaultCloseTimeout = 30 * time.Second

// Close is a graceful KafkaConsumer.close() (see above): the member stops
// when it is done (Stopped), not necessarily at now; keep ticking it and
// delivering its responses until then.
func (m *Member) Close(now protocol.Instant, out *Output) {
	if m.stopped || m.app.closing != closeNone {
		return
	}
	if !m.started {
		m.stop()
		return
	}
	m.app.fastForward(m, now, false)
	if m.app.cb != cbNone {
		m.applyCallback(out) // the application thread finished its callback before calling close()
	}
	m.app.phase, m.app.cont, m.app.pendingSync = appPolling, contNone, nil
	m.onApp = true
	if m.autoCommit.p == nil {
		m.autoCommit.p = new(joinPrepCommit)
	}
	// The close timer, and the sync commit's state, in onJoinPrepare's
	// commit record (close() does not run onJoinPrepare).
	*m.autoCommit.p = joinPrepCommit{deadline: now.Add(min(defaultCloseTimeout, m.cfg.RequestTimeout)), retryAt: now}
	m.autoCommit.prep = prepIdle
	m.app.closing = closeAsync
	if m.cfg.AutoCommit {
		m.app.closing = closeCommit
	}
	m.closeIterate(now, out)
	m.assertInvariants(out)
}

// closeIterate runs close() on the application thread at now, as far as it
// can go without waiting.
func (m *Member) closeIterate(now protocol.Instant, out *Output) {
	if m.app.closing == closeShutdown {
		// Shutdown's step ended: poll() throws WakeupException, close().
		m.app.closing = closeNone
		m.Close(now, out)
		return
	}
	p := m.autoCommit.p
	for range maxStepsPerCall + 2 {
		if m.stopped || m.app.phase != appPolling {
			return
		}
		if !m.net.firePendingCompletions(m, now, out) {
			return
		}
		m.net.HandleTimeouts(now, out, netOwner{m}) // NetworkClient.handleTimedOutRequests
		if m.stopped || m.app.phase != appPolling {
			return
		}
		switch m.app.closing {
		case closeNone, closeShutdown:
			return
		case closeCommit:
			// commitOffsetsSync(allConsumed, timer).
			switch {
			case now >= p.deadline:
				m.app.closing = closeAsync
				continue
			case p.corr != 0:
				return
			case !m.checkCoordinator(now, out) && !m.ensureCoordinatorReady(now, out):
				return // coordinatorUnknownAndUnreadySync: the lookup runs
			}
			corr, res := m.sendOffsetCommit(now, out, commitClose)
			if corr != 0 {
				p.corr = corr
				return
			}
			m.closeCommitDone(now, 0, res)
		case closeAsync:
			if now < p.deadline && m.net.asyncCommitsInFlight() {
				return
			}
			m.closeLeave(now, out)
		case closeCallback:
			// The callback ended (finishBusy applied it): maybeLeaveGroup.
			m.maybeLeaveGroup(now, out, protocol.LeaveClose)
			m.app.closing = closeAwait
		case closeAwait:
			if now < p.deadline && m.coord.known && m.net.requestsInFlightTo(m.coord.node) {
				return
			}
			m.app.closing = closeNone
			m.stop()
			return
		}
	}
}

// closeLeave is AbstractCoordinator.close after the commits: the heartbeat
// thread stops, onLeavePrepare's callback runs (2.4+), then maybeLeaveGroup.
func (m *Member) closeLeave(now protocol.Instant, out *Output) {
	m.hbt.disable() // closeHeartbeatThread
	m.app.closing = closeCallback
	if len(m.owned) == 0 || !m.cfg.behaviour.ownedInSubscription() {
		// No onLeavePrepare before 2.4 (AbstractCoordinator.close @2.3.0
		// calls maybeLeaveGroup only; 0.10.0 likewise): the partitions go
		// with the process.
		return
	}
	// ConsumerCoordinator.onLeavePrepare @3.7.0: lost if the generation is
	// NO_GENERATION's (id or member id) or a rebalance is in progress.
	kind := cbRevoked
	if m.gen.hasReset() || m.gen.memberID() == "" || m.state == PreparingRebalance || m.state == CompletingRebalance {
		kind = cbLost
	}
	m.invokeCallback(now, out, kind, slices.Clone(m.owned), contResume)
}

// closeCommitDone completes close()'s synchronous commit (corr 0: completed
// locally): done unless retriable, which sleeps and retries
// (commitOffsetsSync: timer.sleep(retryBackoff.backoff(attempts++)) @3.7.0,
// retryBackoffMs @3.6.2).
func (m *Member) closeCommitDone(now protocol.Instant, corr uint64, res commitResult) {
	p := m.autoCommit.p
	if m.app.closing != closeCommit || p == nil || corr != p.corr {
		return
	}
	p.corr = 0
	if res != commitRetriable {
		m.app.closing = closeAsync
		return
	}
	d := m.cfg.RetryBackoff
	if m.cfg.behaviour.exponentialBackoff {
		d = protocol.RetryBackoff(m.cfg.RetryBackoff, m.cfg.RetryBackoffMax, p.attempts, m.rng)
		p.attempts++
	}
	d = min(d, p.deadline.Sub(now)) // Timer.sleep sleeps at most the remaining time
	if m.app.phase == appPolling && d > 0 {
		m.app.startBusy(now, d, contResume)
	}
}

// nextClosingDeadline is when close() has something to do while the
// application thread waits inside it.
func (a *appThread) nextClosingDeadline(m *Member) protocol.Instant {
	if len(m.net.queue) > 0 {
		return 0
	}
	p := m.autoCommit.p
	d := min(m.net.nextDeadline(m.cfg), p.deadline)
	if a.closing == closeCommit && p.corr == 0 {
		if m.coord.known {
			d = min(d, p.retryAt)
		} else if m.coord.findCorr == 0 {
			d = min(d, m.coord.retryAt)
		}
	}
	return d
}
