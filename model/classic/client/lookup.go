package client

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// This file is the coordinator lookup: AbstractCoordinator's coordinator and
// findCoordinatorFuture (ensureCoordinatorReady, lookupCoordinator,
// FindCoordinatorResponseHandler, checkAndGetCoordinator,
// markCoordinatorUnknown).

// coordinatorLookup is AbstractCoordinator's coordinator and
// findCoordinatorFuture, with ensureCoordinatorReady's pacing.
type coordinatorLookup struct {
	known    bool
	stale    findStale        // a completed future still referenced (2.8+)
	connHint uint16           // the coordinator connection's position (netclient ConnHinted)
	node     int32            // the coordinator's broker id
	findCorr uint64           // the outstanding findCoordinatorFuture's request (0: none)
	attempts int32            // ensureCoordinatorReady's local attempts counter (this poll() call)
	retryAt  protocol.Instant // no lookup before (backoff after a failed one)
}

// markCoordinatorUnknown is AbstractCoordinator.markCoordinatorUnknown (≤0.10
// coordinatorDead). 3.x: the coordinator connection is disconnected, so every
// request in flight on it fails as a DisconnectException (the generation is
// kept). The Java client does this on the next network poll; the simulator
// does it at once. 0.10's coordinatorDead failed only unsent requests, and the
// simulator sends every request at once, so in-flight requests survive.
func (m *Member) markCoordinatorUnknown(now protocol.Instant, out *Output, reason protocol.DeadReason, err protocol.ErrorCode, isDisconnect bool) {
	if !m.coord.known {
		return
	}
	old := m.coord.node
	m.coord.known = false
	m.emit(out, protocol.Event{Kind: protocol.EvCoordinatorDead, Reason: protocol.DeadReasonText(reason, err), Dead: reason, DeadErr: err,
		Peer: brokerName(old), Gen: m.gen.id()})
	if m.cfg.behaviour.coordinator010 || isDisconnect {
		return
	}
	// disconnectAsync(oldCoordinator): the coordinator connection is closed
	// and its requests fail at the next poll.
	if c := m.net.Conn(old, true); c != nil {
		m.closeConnection(now, out, c, deadCoordinatorDead, true)
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

// handleFindCoordinator is FindCoordinatorResponseHandler: success records
// the coordinator and resets the client-side session timer.
func (m *Member) handleFindCoordinator(now protocol.Instant, out *Output, e inflight, r *protocol.FindCoordinatorResponse) {
	current := m.findDone(e.Corr, r.Error != protocol.None)
	switch r.Error {
	case protocol.None:
		m.coord.known = true
		m.coord.node = r.NodeID
		m.coord.retryAt = 0
		m.emit(out, protocol.Event{Kind: protocol.EvCoordinatorFound, Peer: brokerName(r.NodeID), Gen: m.gen.id()})
		m.tryConnect(now, out, r.NodeID)
		m.hbResetSession(now)
		if m.gen.id() > 0 {
			// 0.10 GroupCoordinatorResponseHandler: start sending heartbeats
			// only with a valid generation (heartbeatTask.reset()).
			m.hbt.reset(now)
		}
		if current && m.onApp && m.coordinatorUnavailable(now) {
			// Kafka: AbstractCoordinator.ensureCoordinatorReady @0.10.0.0-3.7.0:
			// found, but the connection has failed (in reconnect backoff):
			// mark it dead and back off before retrying discovery. Without
			// the sleep the application thread looked up again at once,
			// one lookup per round trip for the whole reconnect backoff.
			// attempts is still that call's (3.7+: the sleep grows).
			m.markCoordinatorUnknown(now, out, deadUnavailable, protocol.None, false)
			m.coord.retryAt = now.Add(m.findBackoff())
		} else {
			m.coord.attempts = 0
		}
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
		protocol.FencedInstanceID, protocol.InvalidRequest, protocol.FencedMemberEpoch, protocol.UnreleasedInstanceID,
		protocol.UnsupportedAssignor, protocol.StaleMemberEpoch:
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
	if !m.onApp && m.cfg.behaviour.pacing != pacing23 {
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
	if !m.cfg.behaviour.exponentialBackoff {
		return m.cfg.RetryBackoff
	}
	d := protocol.RetryBackoff(m.cfg.RetryBackoff, m.cfg.RetryBackoffMax, m.coord.attempts, m.rng)
	m.coord.attempts++
	return d
}

// coordinatorUnavailable is the isUnavailable half of
// AbstractCoordinator.checkAndGetCoordinator: the coordinator connection
// failed and is in reconnect backoff (3.x; the check exists since 0.10.1).
//
// 0.10's coordinatorUnknown marked the coordinator dead as soon as its
// connection had failed (connectionFailed), backoff or not.
func (m *Member) coordinatorUnavailable(now protocol.Instant) bool {
	if !m.coord.known {
		return false
	}
	c := m.net.ConnHinted(m.coord.node, true, &m.coord.connHint)
	if c == nil {
		return false
	}
	if m.cfg.behaviour.coordinator010 {
		return c.Failed()
	}
	return c.InBackoff(now)
}

// checkCoordinator is checkAndGetCoordinator: it marks an unavailable
// coordinator unknown and reports whether the coordinator is known.
func (m *Member) checkCoordinator(now protocol.Instant, out *Output) bool {
	if m.coordinatorUnavailable(now) {
		m.markCoordinatorUnknown(now, out, deadUnavailable, protocol.None, true)
	}
	return m.coord.known
}
