package protocol

// Typed reasons of the events the harness classifies (EvMemberRemoved,
// EvLeave, EvCoordinatorDead). A model sets both the typed field of Event
// and Reason = the typed value's String(), which is exactly the text traces
// carried before the types existed, so trace hashes and golden traces do not
// change. Consumers of events switch on the typed field, never on the text.

// RemovalReason is why the broker's GroupCoordinator removed a member
// (Event.Removal of EvMemberRemoved).
type RemovalReason uint8

const (
	RemovalUnknown RemovalReason = iota
	// RemovalSessionExpired: onExpireHeartbeat, the session timer of a
	// member that had joined.
	RemovalSessionExpired
	// RemovalNewMemberTimeout: the new-member join timer
	// (NewMemberJoinTimeoutMs, KIP-345) of a member that never synced.
	RemovalNewMemberTimeout
	// RemovalLeave: a LeaveGroup request (the client's maybeLeaveGroup).
	RemovalLeave
	// RemovalRebalanceTimeout: onCompleteJoin removed a member that did
	// not rejoin within the rebalance timeout.
	RemovalRebalanceTimeout
	// RemovalSyncTimeout: the pending-sync timer (KIP-814) removed a member
	// that did not send SyncGroup in time.
	RemovalSyncTimeout
	// RemovalMaxSize: group.max.size reached; the coordinator removed the
	// member past the limit (KIP-389).
	RemovalMaxSize
	// RemovalFenced: a static member's old member id was replaced by a new
	// JoinGroup with the same group.instance.id (KIP-345).
	RemovalFenced
)

var removalText = [...]string{"", "session-expired", "new-member-timeout", "leave", "rebalance-timeout", "sync-timeout", "max-size", "fenced"}

// String is the trace text of the reason.
func (r RemovalReason) String() string {
	if int(r) < len(removalText) {
		return removalText[r]
	}
	return "unknown"
}

// LeaveReason is why the client ran maybeLeaveGroup (Event.Leave of EvLeave).
type LeaveReason uint8

const (
	LeaveUnknown LeaveReason = iota
	// LeavePollTimeout: the heartbeat thread saw max.poll.interval.ms
	// expire (AbstractCoordinator.HeartbeatThread, "consumer poll timeout
	// has expired").
	LeavePollTimeout
	// LeaveClose: KafkaConsumer.close ("the consumer is being closed").
	LeaveClose
)

var leaveText = [...]string{"", "consumer poll timeout has expired", "the consumer is being closed"}

// String is Java's reason text, as the LeaveGroup request carries it.
func (r LeaveReason) String() string {
	if int(r) < len(leaveText) {
		return leaveText[r]
	}
	return "unknown"
}

// DeadReason is why the client marked its coordinator unknown
// (AbstractCoordinator.markCoordinatorUnknown; Event.Dead of
// EvCoordinatorDead).
type DeadReason uint8

const (
	DeadUnknown DeadReason = iota
	// DeadSessionTimeout: the client's session timer
	// (Heartbeat.sessionTimerExpired) ran out without a successful heartbeat.
	DeadSessionTimeout
	// DeadRequestTimeout: a request to the coordinator timed out.
	DeadRequestTimeout
	// DeadDisconnect: the connection to the coordinator failed.
	DeadDisconnect
	// DeadErrorResponse: the coordinator answered NOT_COORDINATOR or
	// COORDINATOR_NOT_AVAILABLE (Event.Err-free: the code is in
	// Event.Reason's text and in DeadErr).
	DeadErrorResponse
	// DeadCoordinatorUnavailable: the coordinator connection is in
	// reconnect backoff (ConsumerNetworkClient / checkAndGetCoordinator,
	// "coordinator unavailable").
	DeadCoordinatorUnavailable
)

var deadText = [...]string{"", "session-timeout", "request-timeout", "disconnect", "error-response", "coordinator-unavailable"}

// String is the trace text of the reason; for DeadErrorResponse the trace
// carries the error code's name instead (DeadReasonText).
func (r DeadReason) String() string {
	if int(r) < len(deadText) {
		return deadText[r]
	}
	return "unknown"
}

// DeadReasonText is the trace text of a dead mark: the reason's name, or the
// error code's name for an error response.
func DeadReasonText(r DeadReason, err ErrorCode) string {
	if r == DeadErrorResponse {
		return err.String()
	}
	return r.String()
}
