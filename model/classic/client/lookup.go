package client

import (
	"math/rand/v2"
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

// markCoordinatorUnknown is AbstractCoordinator.markCoordinatorUnknown(cause)
// (≤0.10 coordinatorDead): the coordinator is forgotten and (3.x) its
// connection is disconnected, so every request in flight on it fails as a
// DisconnectException (the generation is kept). The Java client does this on
// the next network poll; the simulator does it at once. 0.10's
// coordinatorDead failed only unsent requests, and the simulator sends every
// request at once, so in-flight requests survive.
func (m *Member) markCoordinatorUnknown(now protocol.Instant, out *Output, reason protocol.DeadReason, err protocol.ErrorCode) {
	old, ok := m.coord.markUnknown()
	if !ok {
		return
	}
	m.emit(out, coordinatorDeadEvent(old, reason, err, m.gen.id()))
	if m.cfg.behaviour.coordinator010 {
		return
	}
	// disconnectAsync(oldCoordinator): the coordinator connection is closed
	// and its requests fail at the next poll.
	if c := m.net.Conn(old, true); c != nil {
		m.net.Close(now, out, c, deadCoordinatorDead, true, netOwner{m})
	}
}

// markCoordinatorDisconnected is markCoordinatorUnknown(isDisconnected =
// true, cause) (AbstractCoordinator @3.7.0): the coordinator is forgotten
// because its connection is already down (a disconnect, a request timeout
// that closes it, a connection in reconnect backoff), so there is no
// connection left to close.
func (m *Member) markCoordinatorDisconnected(out *Output, reason protocol.DeadReason) {
	if old, ok := m.coord.markUnknown(); ok {
		m.emit(out, coordinatorDeadEvent(old, reason, protocol.None, m.gen.id()))
	}
}

// coordinatorDeadEvent is the trace of a coordinator marked unknown.
func coordinatorDeadEvent(old int32, reason protocol.DeadReason, err protocol.ErrorCode, gen int32) protocol.Event {
	return protocol.Event{Kind: protocol.EvCoordinatorDead, Reason: protocol.DeadReasonText(reason, err), Dead: reason, DeadErr: err,
		Peer: brokerName(old), Gen: gen}
}

// invariant is what holds of the lookup between calls
// (AbstractCoordinator.findCoordinatorFuture: one lookup at a time):
//   - a completed future is still referenced (stale) only from 2.8 (before,
//     the response handler cleared the field), and never beside one in
//     flight (lookupCoordinator returns the referenced future);
//   - the backoff after a failed lookup runs only with none in flight
//     (lookupCoordinator clears it when it sends).
func (c *coordinatorLookup) invariant(b *behaviour) string {
	switch {
	case c.stale != findStaleNone && b.pacing == pacing23:
		return "a completed lookup still referenced before 2.8"
	case c.stale != findStaleNone && c.findCorr != 0:
		return "a lookup in flight beside a completed one still referenced"
	case c.retryAt != 0 && c.findCorr != 0:
		return "a lookup backoff with a lookup in flight"
	}
	return ""
}

// markUnknown forgets a known coordinator; it reports the old one's node
// and whether there was one.
func (c *coordinatorLookup) markUnknown() (old int32, was bool) {
	if !c.known {
		return 0, false
	}
	c.known = false
	return c.node, true
}

// ensureCoordinatorReady is AbstractCoordinator.ensureCoordinatorReady with a
// timer that does not wait: it sends a lookup if none is outstanding and the
// backoff after a failed one has passed (3.7+: exponential; earlier the
// metadata refresh rate limit, modelled as retry.backoff.ms).
func (m *Member) ensureCoordinatorReady(now protocol.Instant, out *Output) bool {
	if m.coord.known {
		return true
	}
	m.coord.takeStale(now, m.cfg, m.rng)
	if m.coord.lookupDue(now) {
		m.lookupCoordinator(now, out)
	}
	return false
}

// takeStale is ensureCoordinatorReady meeting a lookup completed on the
// heartbeat thread (2.8+): lookupCoordinator returns that future; a failed
// one is slept on, then cleared.
func (c *coordinatorLookup) takeStale(now protocol.Instant, cfg *template, rng *rand.Rand) {
	if c.stale == findStaleNone {
		return
	}
	if c.stale == findStaleFailed {
		c.retryAt = now.Add(c.findBackoff(cfg, rng))
	}
	c.stale = findStaleNone
}

// lookupDue: no lookup is outstanding and the backoff after a failed one
// has passed.
func (c *coordinatorLookup) lookupDue(now protocol.Instant) bool {
	return c.findCorr == 0 && now >= c.retryAt
}

// newPollCall is ensureCoordinatorReady's per-call state starting afresh
// with a KafkaConsumer.poll(Duration) call: the attempts counter is a local
// of that method (AbstractCoordinator 3.7.0 281) and its sleep was bounded
// by the previous call's timer, so the first lookup of a call goes out at
// once.
func (c *coordinatorLookup) newPollCall() {
	c.attempts = 0
	c.retryAt = 0
}

// clearFindCoordinatorFuture is AbstractCoordinator
// .clearFindCoordinatorFuture: the future is forgotten (a response to it is
// still handled, as not the current lookup).
func (c *coordinatorLookup) clearFindCoordinatorFuture() {
	c.findCorr, c.stale = 0, findStaleNone
}

// nextRetry is the end of the application thread's backoff after a failed
// lookup, when it waits for one (Never otherwise).
func (c *coordinatorLookup) nextRetry() protocol.Instant {
	if !c.known && c.findCorr == 0 && c.retryAt != 0 {
		return c.retryAt
	}
	return protocol.Never
}

// lookupCoordinator is AbstractCoordinator.lookupCoordinator: the request
// goes to the least-loaded node (netclient.go); with every broker in
// reconnect backoff it fails at once (NoAvailableBrokersException) and is
// retried after the lookup backoff.
func (m *Member) lookupCoordinator(now protocol.Instant, out *Output) {
	if m.coord.findCorr != 0 {
		return
	}
	broker := m.net.leastLoadedNode(now, m.cfg, m.rng)
	if broker < 0 {
		// RequestFuture.noBrokersAvailable(): a failed future, not kept in
		// findCoordinatorFuture.
		m.coord.findCoordinatorFailed(now, true, m.onApp, m.cfg, m.rng)
		return
	}
	m.coord.retryAt = 0
	m.coord.findCorr = m.send(now, out, broker, false, &protocol.FindCoordinatorRequest{Key: m.cfg.GroupID}, m.cfg.RequestTimeout)
}

// handleFindCoordinator is FindCoordinatorResponseHandler: success records
// the coordinator and resets the client-side session timer.
func (m *Member) handleFindCoordinator(now protocol.Instant, out *Output, e inflight, r *protocol.FindCoordinatorResponse) {
	current := m.coord.findDone(e.Corr, r.Error != protocol.None, m.onApp, m.cfg.behaviour)
	switch r.Error {
	case protocol.None:
		m.coord.known = true
		m.coord.node = r.NodeID
		m.coord.retryAt = 0
		m.emit(out, protocol.Event{Kind: protocol.EvCoordinatorFound, Peer: brokerName(r.NodeID), Gen: m.gen.id()})
		// NetworkClient.tryConnect: a connection to the coordinator is
		// started unless one exists or it is in backoff.
		m.net.TryConnect(now, out, r.NodeID, true, netOwner{m})
		m.hb.resetSessionTimeout(now, m.cfg)
		if m.gen.id() > 0 {
			// 0.10 GroupCoordinatorResponseHandler: start sending heartbeats
			// only with a valid generation (heartbeatTask.reset()).
			m.hbt.reset(now)
		}
		if current && m.onApp && m.coord.unavailable(now, &m.net, m.cfg.behaviour) {
			// Kafka: AbstractCoordinator.ensureCoordinatorReady @0.10.0.0-3.7.0:
			// found, but the connection has failed (in reconnect backoff):
			// mark it dead and back off before retrying discovery. Without
			// the sleep the application thread looked up again at once,
			// one lookup per round trip for the whole reconnect backoff.
			// attempts is still that call's (3.7+: the sleep grows).
			m.markCoordinatorUnknown(now, out, deadUnavailable, protocol.None)
			m.coord.retryAt = now.Add(m.coord.findBackoff(m.cfg, m.rng))
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
		m.coord.findCoordinatorFailed(now, current, m.onApp, m.cfg, m.rng)
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
//
// onApp: the application thread handles the completion.
func (c *coordinatorLookup) findDone(corr uint64, failed, onApp bool, b *behaviour) bool {
	if corr == 0 || corr != c.findCorr {
		return false
	}
	c.findCorr = 0
	if !onApp && b.pacing != pacing23 {
		c.stale = findStaleDone
		if failed {
			c.stale = findStaleFailed
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
func (c *coordinatorLookup) findCoordinatorFailed(now protocol.Instant, current, onApp bool, cfg *template, rng *rand.Rand) {
	if !current || !onApp {
		return
	}
	c.retryAt = now.Add(c.findBackoff(cfg, rng))
}

// findBackoff is the application thread's sleep after a failed lookup.
func (c *coordinatorLookup) findBackoff(cfg *template, rng *rand.Rand) time.Duration {
	if !cfg.behaviour.exponentialBackoff {
		return cfg.RetryBackoff
	}
	d := protocol.RetryBackoff(cfg.RetryBackoff, cfg.RetryBackoffMax, c.attempts, rng)
	c.attempts++
	return d
}

// unavailable is the isUnavailable half of
// AbstractCoordinator.checkAndGetCoordinator: the coordinator connection
// failed and is in reconnect backoff (3.x; the check exists since 0.10.1).
//
// 0.10's coordinatorUnknown marked the coordinator dead as soon as its
// connection had failed (connectionFailed), backoff or not.
func (c *coordinatorLookup) unavailable(now protocol.Instant, n *netClient, b *behaviour) bool {
	if !c.known {
		return false
	}
	conn := n.ConnHinted(c.node, true, &c.connHint)
	if conn == nil {
		return false
	}
	if b.coordinator010 {
		return conn.Failed()
	}
	return conn.InBackoff(now)
}

// checkCoordinator is checkAndGetCoordinator: it marks an unavailable
// coordinator unknown and reports whether the coordinator is known.
func (m *Member) checkCoordinator(now protocol.Instant, out *Output) bool {
	if m.coord.unavailable(now, &m.net, m.cfg.behaviour) {
		m.markCoordinatorDisconnected(out, deadUnavailable)
	}
	return m.coord.known
}
