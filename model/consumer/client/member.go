// Package consumer is the client side of the consumer group protocol
// (KIP-848, group.protocol=consumer): the AsyncKafkaConsumer's membership
// manager and heartbeat request manager (AbstractMembershipManager,
// ConsumerMembershipManager, AbstractHeartbeatRequestManager,
// HeartbeatRequestState; kafka-consumer-protocol.md §3) as a pure state
// machine, beside the classic client of package client. Process
// (process.go) wraps it with the application and network threads; the
// harness runs a Process in each slot of a group.protocol=consumer group.
//
// Driving it: a subscribed member joins at its first AppPoll (4.0+,
// KAFKA-17154: subscribe() joins at the next poll()); call AppPoll at each
// application poll(); hand
// it the coordinator (CoordinatorFound / CoordinatorUnknown), heartbeat
// responses and failures, and call Tick at NextDeadline. Output.Sends are
// the heartbeats to send. Rebalance callbacks run on the application
// thread: a reconciliation that needs one waits for the next AppPoll and
// then for CallbackDone.
//
// With auto-commit a reconciliation starts only from AppPoll and begins
// with a commit of the owned partitions (Output.ReconcileStarted; Process
// sends it); from 4.3 (Config.RevokeFromPollOnly, KAFKA-20332) one that
// revokes starts only from AppPoll too. A target arriving while a
// reconciliation runs is reconciled after it is acknowledged.
//
// Deviations: the commit at the start of a reconciliation (auto-commit) is
// Process's (process.go), without retries; topic ids are
// names (no metadata resolution); the network thread acts at deadlines,
// not on its 5 s maximum poll wait; close() and the leave options of 4.1
// (CloseOptions) are one Close.
package client

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// State is the client's MemberState (CMS@4.3).
type State uint8

const (
	Unsubscribed State = iota
	Joining
	Reconciling
	Acknowledging
	Stable
	Fenced
	PrepareLeaving
	Leaving
	Fatal
	Stale
)

func (s State) String() string {
	return [...]string{"UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE", "FENCED",
		"PREPARE_LEAVING", "LEAVING", "FATAL", "STALE"}[s]
}

// Config is the member's configuration (ConsumerConfig).
type Config struct {
	Name            string // node name for events
	GroupID         string
	MemberID        string // the client-generated member id (KIP-1082, 4.0+)
	InstanceID      string // group.instance.id
	Topics          []string
	ServerAssignor  string        // group.remote.assignor
	MaxPollInterval time.Duration // max.poll.interval.ms: poll timer and RebalanceTimeoutMs
	RetryBackoff    time.Duration // retry.backoff.ms
	RetryBackoffMax time.Duration // retry.backoff.max.ms
	// AutoCommit is enable.auto.commit: a reconciliation then starts only
	// from the application thread's poll() (maybeReconcile(canCommit =
	// true)) and begins with a commit (signalReconciliationStarted).
	AutoCommit bool
	// RevokeFromPollOnly: a reconciliation that revokes partitions starts
	// only from the application thread's poll(), with or without
	// auto-commit (KAFKA-20332, 4.3.0: the background thread may start
	// only one that just adds partitions).
	RevokeFromPollOnly bool
}

// Output collects what one call produced.
type Output struct {
	Sends  []protocol.ConsumerGroupHeartbeatRequest
	Events []protocol.Event
	// Callback is the rebalance-listener callback the application thread
	// must run (cbRevoke, cbAssign, cbLost) with its partitions; the
	// caller reports its end with CallbackDone.
	Callback      Callback
	CallbackParts []protocol.TopicPartition
	// ReconcileStarted: Callback is the first step of a reconciliation
	// that just started; with auto-commit the caller commits the owned
	// partitions before running it (ConsumerMembershipManager.
	// signalReconciliationStarted → maybeAutoCommitSyncBeforeRebalance).
	ReconcileStarted bool
}

// Callback names a ConsumerRebalanceListener callback.
type Callback uint8

const (
	NoCallback Callback = iota
	CallbackRevoked
	CallbackAssigned
	CallbackLost
)

// Member is one consumer's membership.
type Member struct {
	cfg   Config
	rng   *rand.Rand
	state State
	epoch int32

	coordKnown bool
	inFlight   bool
	interval   time.Duration // heartbeat interval from the broker (0 until the first response)
	nextHB     protocol.Instant
	backoffTil protocol.Instant
	attempts   int32
	sentFull   bool // the last request sent carried the full fields (reset after any error)
	sentOwned  []protocol.TopicPartition
	ownedSent  bool

	pollDeadline protocol.Instant

	owned  []protocol.TopicPartition // the current assignment (sorted)
	target []protocol.TopicPartition // the latest assignment from the broker
	hasTgt bool
	// reconciliation in progress: waiting for the app thread's callback
	reconciling bool
	recTarget   []protocol.TopicPartition // the target the running reconciliation applies (resolvedAssignment)
	pendingCB   Callback
	cbWaiting   bool // a callback was handed to the app thread and has not ended
	cbParts     []protocol.TopicPartition
}

// New returns an unsubscribed member; rng is its own stream (backoff jitter).
func New(cfg Config, rng *rand.Rand) *Member {
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	if cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoffMax = time.Second
	}
	if cfg.MaxPollInterval == 0 {
		cfg.MaxPollInterval = 300 * time.Second
	}
	return &Member{cfg: cfg, rng: rng, pollDeadline: protocol.Never}
}

// State is the member state; Epoch the member epoch; Owned the partitions
// the application owns (sorted, shared).
func (m *Member) State() State                     { return m.state }
func (m *Member) Epoch() int32                     { return m.epoch }
func (m *Member) Owned() []protocol.TopicPartition { return m.owned }

func (m *Member) emit(out *Output, ev protocol.Event) {
	ev.Node, ev.Group = m.cfg.Name, m.cfg.GroupID
	out.Events = append(out.Events, ev)
}

func (m *Member) transition(to State, out *Output) {
	if m.state == to {
		return
	}
	if to == Stable && !m.checkStable(out) {
		return
	}
	from := m.state
	m.state = to
	m.emit(out, protocol.Event{Kind: protocol.EvMemberState, State: to.String(), Detail: from.String(), Gen: m.epoch})
}

// AppPoll is one application poll(): the poll timer restarts, a STALE or
// UNSUBSCRIBED member (re)joins, and a pending reconciliation step that
// needs the application thread starts (maybeReconcile(true)).
func (m *Member) AppPoll(now protocol.Instant, out *Output) {
	m.pollDeadline = now.Add(m.cfg.MaxPollInterval)
	switch m.state {
	case Unsubscribed:
		m.join(out)
	case Stale:
		if !m.cbWaiting {
			m.join(out)
		}
	case Joining, Reconciling, Acknowledging, Stable, Fenced, PrepareLeaving, Leaving, Fatal:
	}
	m.maybeReconcile(now, out, true)
	m.Tick(now, out)
}

func (m *Member) join(out *Output) {
	m.epoch = 0
	m.target, m.hasTgt = nil, false
	m.sentFull = false
	m.transition(Joining, out)
}

// CoordinatorFound and CoordinatorUnknown: the coordinator manager's view.
func (m *Member) CoordinatorFound(now protocol.Instant, out *Output) {
	m.coordKnown = true
	m.Tick(now, out)
}

// CoordinatorUnknown: no heartbeat goes out until a coordinator is found.
func (m *Member) CoordinatorUnknown() { m.coordKnown = false }

// backoff is ExponentialBackoff(retry.backoff.ms, 2, retry.backoff.max.ms, 0.2).
func (m *Member) backoff() time.Duration {
	return protocol.RetryBackoff(m.cfg.RetryBackoff, m.cfg.RetryBackoffMax, m.attempts, m.rng)
}

// heartbeatNow: JOINING, ACKNOWLEDGING or LEAVING and nothing in flight
// (AHRM@4.3 L164-200 step 3; it ignores the retry backoff).
func (m *Member) heartbeatNow() bool {
	return !m.inFlight && (m.state == Joining || m.state == Acknowledging || m.state == Leaving)
}

// Tick runs the heartbeat request manager: the poll timer (proactive
// leave), then a heartbeat when one is due.
func (m *Member) Tick(now protocol.Instant, out *Output) {
	if !m.coordKnown {
		if m.state == Leaving {
			m.transition(Unsubscribed, out) // the leave is skipped: best effort
		}
		return
	}
	switch m.state {
	case Unsubscribed, Fatal, Stale, Fenced:
		return
	case Joining, Reconciling, Acknowledging, Stable, PrepareLeaving, Leaving:
	}
	if now >= m.pollDeadline && m.state != Leaving && m.state != PrepareLeaving {
		// max.poll.interval.ms expired: leave at once, become STALE.
		m.emit(out, protocol.Event{Kind: protocol.EvPollTimeout, Gen: m.epoch})
		m.leave(now, out, true)
		return
	}
	due := m.heartbeatNow() || (!m.inFlight && now >= m.nextHB && now >= m.backoffTil)
	if !due {
		return
	}
	m.send(now, out)
	// The ack generated, a newer target is reconciled next (the
	// membership manager's poll: maybeReconcile(false)).
	m.maybeReconcile(now, out, false)
}

// send builds ConsumerHeartbeatRequestManager's request (HeartbeatState):
// the full fields when joining or after an error, otherwise only what
// changed; the owned partitions after each reconciliation (the ack).
func (m *Member) send(now protocol.Instant, out *Output) {
	r := protocol.ConsumerGroupHeartbeatRequest{GroupID: m.cfg.GroupID, MemberID: m.cfg.MemberID, MemberEpoch: m.epoch,
		InstanceID: m.cfg.InstanceID, RebalanceTimeoutMs: -1}
	full := m.state == Joining || !m.sentFull
	if full {
		r.RebalanceTimeoutMs = int32(m.cfg.MaxPollInterval.Milliseconds())
		r.SubscribedTopics = slices.Clone(m.cfg.Topics)
		r.ServerAssignor = m.cfg.ServerAssignor
	}
	if full || !m.ownedSent || !slices.Equal(m.sentOwned, m.owned) {
		r.Owned, r.OwnedSent = slices.Clone(m.owned), true
		if r.Owned == nil {
			r.Owned = []protocol.TopicPartition{}
		}
		m.sentOwned, m.ownedSent = slices.Clone(m.owned), true
	}
	m.sentFull = true
	m.inFlight = true
	m.nextHB = now.Add(m.interval) // restarted at send (3.8+, KAFKA-16528)
	out.Sends = append(out.Sends, r)
	switch m.state {
	case Acknowledging:
		// The ack is generated: STABLE if the target is reached.
		if slices.Equal(m.target, m.owned) {
			m.transition(Stable, out)
		} else {
			m.transition(Reconciling, out)
		}
	case Leaving:
		if m.epoch == protocol.LeaveEpoch || m.epoch == protocol.StaticLeaveEpoch {
			m.inFlight = false // the leave's response is not waited for
		}
	case Unsubscribed, Joining, Reconciling, Stable, Fenced, PrepareLeaving, Fatal, Stale:
	}
}

// leave sends the leave heartbeat (epoch −1, or −2 for a static member)
// and, for a poll timeout, ends STALE with its partitions lost.
func (m *Member) leave(now protocol.Instant, out *Output, pollTimeout bool) {
	reason := protocol.LeaveClose
	if pollTimeout {
		reason = protocol.LeavePollTimeout
	}
	detail := "skipped"
	if m.coordKnown {
		detail = "sent"
	}
	m.emit(out, protocol.Event{Kind: protocol.EvLeave, Reason: reason.String(), Leave: reason, Detail: detail, Gen: m.epoch})
	m.transition(PrepareLeaving, out)
	m.transition(Leaving, out)
	m.epoch = protocol.LeaveEpoch
	if m.cfg.InstanceID != "" {
		m.epoch = protocol.StaticLeaveEpoch
	}
	m.inFlight = false
	m.send(now, out)
	if pollTimeout {
		m.transition(Stale, out)
		m.lose(out)
	} else {
		m.transition(Unsubscribed, out)
	}
}

// lose queues onPartitionsLost for the owned partitions and clears them.
func (m *Member) lose(out *Output) {
	if len(m.owned) > 0 {
		m.handOff(out, CallbackLost, m.owned)
		m.emit(out, protocol.Event{Kind: protocol.EvRevoked, Detail: "lost", Partitions: m.owned, Gen: m.epoch})
	}
	m.owned, m.target, m.hasTgt, m.reconciling, m.recTarget = nil, nil, false, false, nil
}

func (m *Member) handOff(out *Output, cb Callback, parts []protocol.TopicPartition) {
	out.Callback, out.CallbackParts = cb, slices.Clone(parts)
	m.cbWaiting, m.pendingCB = true, cb
}

// Response handles a ConsumerGroupHeartbeat response (AHRM@4.3 L356-470).
func (m *Member) Response(now protocol.Instant, r *protocol.ConsumerGroupHeartbeatResponse, out *Output) {
	m.inFlight = false
	if m.state == Unsubscribed || m.state == Stale {
		return // a leave's response: nothing to do
	}
	switch r.Error {
	case protocol.None:
		if !m.checkResponse(r, out) {
			return
		}
		m.attempts = 0
		m.backoffTil = now.Add(m.backoff())
		if iv := time.Duration(r.HeartbeatIntervalMs) * time.Millisecond; iv != m.interval {
			m.interval = iv
			m.nextHB = now.Add(iv)
		}
		m.epoch = r.MemberEpoch
		if r.HasAssignment && (m.state == Joining || m.state == Stable || m.state == Acknowledging || m.state == Reconciling) {
			m.target, m.hasTgt = slices.Clone(r.Assignment), true
			if m.state == Joining || !slices.Equal(m.target, m.owned) {
				m.transition(Reconciling, out)
			} else if m.state == Reconciling {
				m.transition(Stable, out)
			}
		}
		m.maybeReconcile(now, out, false)
	case protocol.NotCoordinator, protocol.CoordinatorNotAvailable:
		// onFailedAttempt zeroes the heartbeat timer, reset() the backoff:
		// the next heartbeat goes as soon as the coordinator is found.
		// Kafka: AbstractHeartbeatRequestManager.onErrorResponse @v8.0.0, @v8.3.0
		m.coordKnown = false
		m.attempts, m.backoffTil, m.nextHB, m.sentFull = 0, now, now, false
	case protocol.CoordinatorLoadInProgress:
		m.failed(now)
	case protocol.FencedMemberEpoch, protocol.UnknownMemberID:
		m.transition(Fenced, out)
		m.epoch = 0
		m.attempts, m.backoffTil, m.nextHB, m.sentFull = 0, now, now, false
		m.lose(out)
		if !m.cbWaiting {
			m.join(out)
		}
	case protocol.GroupAuthorizationFailed, protocol.InvalidRequest, protocol.GroupMaxSizeReached,
		protocol.UnsupportedAssignor, protocol.UnreleasedInstanceID, protocol.FencedInstanceID,
		protocol.UnsupportedVersion, protocol.GroupIDNotFound, protocol.StaleMemberEpoch,
		protocol.UnknownServerError, protocol.RequestTimedOut, protocol.NetworkException,
		protocol.IllegalGeneration, protocol.InconsistentGroupProtocol, protocol.InvalidGroupID,
		protocol.InvalidSessionTimeout, protocol.RebalanceInProgress, protocol.InvalidCommitOffsetSize,
		protocol.MemberIDRequired, protocol.NotEnoughReplicas, protocol.NotLeaderOrFollower,
		protocol.UnknownTopicOrPartition, protocol.KafkaStorageError, protocol.NotEnoughReplicasAfterAppend:
		fallthrough
	default:
		// GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, GROUP_MAX_SIZE_REACHED,
		// UNSUPPORTED_ASSIGNOR, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID,
		// UNSUPPORTED_VERSION, GROUP_ID_NOT_FOUND and any other: fatal.
		m.emit(out, protocol.Event{Kind: protocol.EvFatal, Err: r.Error, Detail: "consumer-group-heartbeat", Gen: m.epoch})
		m.transition(Fatal, out)
		m.lose(out)
	}
}

// Failed is a send failure (request timeout or disconnect): retry after
// the backoff; a disconnect also loses the coordinator.
func (m *Member) Failed(now protocol.Instant, disconnect bool) {
	m.inFlight = false
	if disconnect {
		m.coordKnown = false
	}
	m.failed(now)
}

func (m *Member) failed(now protocol.Instant) {
	m.backoffTil = now.Add(m.backoff())
	m.attempts++
	m.nextHB = now // a failure zeroes the interval timer (HRS.onFailedAttempt)
	m.sentFull = false
}

// maybeReconcile starts a reconciliation when the member is RECONCILING
// toward a target that differs from what it owns and none is running
// (AMM@4.3 L812-975): revoke first (onPartitionsRevoked on the
// application thread), then assign (onPartitionsAssigned), then ACK. The
// reconciliation applies the target as it was when it started
// (resolvedAssignment): a target that arrives meanwhile waits for it to
// finish and be acknowledged, then is reconciled in turn. With auto-commit
// only the application thread's poll() starts one (canCommit), and it
// begins with the commit (ReconcileStarted).
// Kafka: AbstractMembershipManager.maybeReconcile @v8.0.0, @v8.3.0
func (m *Member) maybeReconcile(now protocol.Instant, out *Output, canCommit bool) {
	if m.state != Reconciling || m.cbWaiting || m.reconciling || !m.hasTgt {
		return
	}
	if !canCommit && m.pollOnly() {
		return
	}
	var revoked, added []protocol.TopicPartition
	for _, p := range m.owned {
		if !slices.Contains(m.target, p) {
			revoked = append(revoked, p)
		}
	}
	for _, p := range m.target {
		if !slices.Contains(m.owned, p) {
			added = append(added, p)
		}
	}
	m.reconciling, m.recTarget = true, slices.Clone(m.target)
	switch {
	case len(revoked) > 0:
		m.handOff(out, CallbackRevoked, revoked)
	default:
		m.handOff(out, CallbackAssigned, added)
	}
	out.ReconcileStarted = true
}

// NeedsPoll: a reconciliation waits for the application thread's next
// poll() to start (auto-commit: maybeReconcile(true) from its PollEvent).
func (m *Member) NeedsPoll() bool {
	return m.state == Reconciling && !m.cbWaiting && !m.reconciling && m.hasTgt && m.pollOnly()
}

// pollOnly: the pending reconciliation may start only from poll()
// (AMM.maybeReconcile: `autoCommitEnabled && !canCommit` @v8.0.0–v8.2.0;
// `!canCommit && (autoCommitEnabled || !revokedPartitions.isEmpty())`
// @v8.3.0, KAFKA-20332).
func (m *Member) pollOnly() bool {
	if m.cfg.AutoCommit {
		return true
	}
	if !m.cfg.RevokeFromPollOnly {
		return false
	}
	for _, p := range m.owned {
		if !slices.Contains(m.target, p) {
			return true
		}
	}
	return false
}

// CallbackDone is the application thread finishing the callback it was
// handed: revoked partitions are given up (then the assignment follows),
// assigned ones become owned and the member acknowledges at once.
func (m *Member) CallbackDone(now protocol.Instant, out *Output) {
	if !m.cbWaiting {
		return
	}
	m.cbWaiting = false
	cb := m.pendingCB
	m.pendingCB = NoCallback
	switch cb {
	case CallbackRevoked:
		kept := m.owned[:0:0]
		for _, p := range m.owned {
			if slices.Contains(m.recTarget, p) {
				kept = append(kept, p)
			}
		}
		var gone []protocol.TopicPartition
		for _, p := range m.owned {
			if !slices.Contains(m.recTarget, p) {
				gone = append(gone, p)
			}
		}
		m.emit(out, protocol.Event{Kind: protocol.EvRevoked, Detail: "revoked", Partitions: gone, Gen: m.epoch})
		m.owned = kept
		if m.state == Reconciling {
			var added []protocol.TopicPartition
			for _, p := range m.recTarget {
				if !slices.Contains(m.owned, p) {
					added = append(added, p)
				}
			}
			m.handOff(out, CallbackAssigned, added)
		} else {
			m.reconciling = false // maybeAbortReconciliation
		}
	case CallbackAssigned:
		m.owned = slices.Clone(m.recTarget)
		m.reconciling = false
		m.emit(out, protocol.Event{Kind: protocol.EvAssigned, Partitions: m.owned, Gen: m.epoch})
		if m.state == Reconciling {
			m.transition(Acknowledging, out)
		}
	case CallbackLost:
		if m.state == Fenced {
			m.join(out)
		}
	case NoCallback:
	}
	m.Tick(now, out)
}

// NextDeadline is the next instant Tick has something to do.
func (m *Member) NextDeadline() protocol.Instant {
	switch m.state {
	case Unsubscribed, Fatal, Stale, Fenced:
		return protocol.Never
	case Joining, Reconciling, Acknowledging, Stable, PrepareLeaving, Leaving:
	}
	if !m.coordKnown {
		return protocol.Never
	}
	d := m.pollDeadline
	if !m.inFlight {
		d = min(d, max(m.nextHB, m.backoffTil))
	}
	return d
}

// CoordinatorKnown tells whether the member has a coordinator to
// heartbeat to (an error response or a failure can clear it).
func (m *Member) CoordinatorKnown() bool { return m.coordKnown }

// PollTimerFrom restarts the poll timer as of the application's last
// poll() at at (the harness replays uneventful polls lazily: an idle
// application loop polls continuously, so its timer is restarted at every
// network-thread wake-up).
func (m *Member) PollTimerFrom(at protocol.Instant) {
	if m.state != Unsubscribed {
		m.pollDeadline = at.Add(m.cfg.MaxPollInterval)
	}
}

// Close is KafkaConsumer.close() as far as the membership goes
// (AsyncKafkaConsumer.close → leaveGroupOnClose): the leave heartbeat
// (epoch −1, or −2 for a static member) goes out at once when the
// coordinator is known, and the member ends UNSUBSCRIBED. Deviation: the
// onPartitionsRevoked callback close() runs first takes no time here.
func (m *Member) Close(now protocol.Instant, out *Output) {
	switch m.state {
	case Unsubscribed, Fatal, Stale, Leaving, PrepareLeaving:
		return
	case Joining, Reconciling, Acknowledging, Stable, Fenced:
	}
	if !m.coordKnown {
		m.emit(out, protocol.Event{Kind: protocol.EvLeave, Reason: protocol.LeaveClose.String(), Leave: protocol.LeaveClose, Detail: "skipped", Gen: m.epoch})
		m.transition(Unsubscribed, out)
		return
	}
	m.leave(now, out, false)
}

// ID is the member id (client-generated, KIP-1082).
func (m *Member) ID() string { return m.cfg.MemberID }
