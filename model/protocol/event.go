package protocol

import "unsafe"

// EventKind names a typed trace event emitted by a model. The harness adds
// its own kinds (message sent, delivered, dropped, faults). Values are stable:
// they appear in traces users keep.
type EventKind string

// Events the client model emits.
const (
	// EvMemberState: the client's MemberState changed (State = new state,
	// Detail = old state).
	EvMemberState EventKind = "member-state"
	// EvRejoinRequested: requestRejoin with a typed reason (Reason).
	EvRejoinRequested EventKind = "rejoin-requested"
	// EvCoordinatorDead: markCoordinatorUnknown / coordinatorDead (Reason says
	// why: session-timeout, request-timeout, disconnect, NOT_COORDINATOR, ...).
	EvCoordinatorDead EventKind = "coordinator-dead"
	// EvCoordinatorFound: FindCoordinator succeeded (Peer = broker).
	EvCoordinatorFound EventKind = "coordinator-found"
	// EvGenerationReset: resetGeneration (Detail: "keep-id" or "drop-id").
	EvGenerationReset EventKind = "generation-reset"
	// EvJoined: JoinGroup answered NONE (Gen, Detail = "leader"/"follower").
	EvJoined EventKind = "joined"
	// EvAssigned: onJoinComplete applied an assignment (Gen, Partitions).
	EvAssigned EventKind = "assigned"
	// EvRevoked: onPartitionsRevoked / onPartitionsLost ran (Detail "revoked"/"lost").
	EvRevoked EventKind = "revoked"
	// EvPollTimeout: the heartbeat thread saw max.poll.interval.ms expire.
	EvPollTimeout EventKind = "poll-timeout"
	// EvRequestTimeout: an in-flight request exceeded its timeout (API).
	EvRequestTimeout EventKind = "request-timeout"
	// EvFatal: a fatal error stopped the member (Err).
	EvFatal EventKind = "fatal"
	// EvLeave: maybeLeaveGroup ran (Reason).
	EvLeave EventKind = "leave"
	// EvAssertFailed: a model's own invariant check failed (Detail names the
	// part and the check); the harness reports it as a violation.
	EvAssertFailed EventKind = "assert-failed"
)

// Events the coordinator model emits.
const (
	// EvGroupState: the group's state changed (State new, Detail old, Gen).
	EvGroupState EventKind = "group-state"
	// EvMemberAdded: a member joined the group (Peer = member id).
	EvMemberAdded EventKind = "member-added"
	// EvMemberRemoved: a member was removed (Peer = member id, Reason =
	// session-expired, leave, rebalance-timeout, sync-timeout, new-member-timeout, ...).
	EvMemberRemoved EventKind = "member-removed"
	// EvRebalanceStart: prepareRebalance (Reason = the trigger).
	EvRebalanceStart EventKind = "rebalance-start"
	// EvGenerationComplete: a join phase completed (Gen, Members, Peer = leader).
	EvGenerationComplete EventKind = "generation"
	// EvGroupPersisted: the group record was written (Gen).
	EvGroupPersisted EventKind = "group-persisted"
)

// Event is one typed trace event. It is a flat value (no maps, no
// allocation beyond its strings) so models can emit it on hot paths.
// Unused fields are zero.
type Event struct {
	Kind   EventKind
	Node   string // who emitted it: a member name or a broker name
	Group  string
	Peer   string // the other party: a member id, a broker, a leader
	State  string
	Reason string
	Detail string
	API    APIKey
	Err    ErrorCode
	Gen    int32
	// Count is a small number whose meaning depends on Kind (members in a
	// generation, partitions assigned).
	Count int32
	// The typed vocabulary (vocab.go, reasons.go): each field the typed
	// form of State, Reason or Detail for the kinds named. The text is
	// what the hash and the JSON trace carry; these fields are not a second
	// source of truth, only the form every consumer of the trace compares.
	// (Their order packs them into the struct's padding: eventSize.)
	GroupState  GroupState      // EvGroupState: State
	MemberState MemberState     // EvMemberState: State
	Process     ProcessState    // the harness's process and broker-process events: State
	Trigger     RebalanceReason // EvRebalanceStart: Reason
	// Partitions carries partition lists (EvAssigned, EvRevoked); shared, do not mutate.
	Partitions   []TopicPartition
	Removal      RemovalReason // EvMemberRemoved: Reason
	Leave        LeaveReason   // EvLeave: Reason
	Dead         DeadReason    // EvCoordinatorDead: Reason
	Conversion   Conversion    // the harness's group-type event, and EvMemberAdded of an upgrade: Reason
	Revocation   Revocation    // EvRevoked: Detail (and Reason "fatal")
	LeaveRequest LeaveRequest  // EvLeave: Detail
	DeadErr      ErrorCode     // EvCoordinatorDead with Dead == DeadErrorResponse
	// ReqCorr is the correlation id of the request an EvRequestTimeout is
	// about (not hashed, not in the JSON trace), so explain can name the
	// very request that got no answer.
	ReqCorr uint64
}

// eventSize is Event's size on 64-bit platforms: every model event is
// copied into the trace at this size (and a kept trace holds one per
// event), so the typed fields live in what was padding; change it
// deliberately.
const eventSize = 168

var _ [eventSize - unsafe.Sizeof(Event{})]struct{} // fails to compile if Event grows

// Events of the client's network layer (NetworkClient, ClusterConnectionStates).
const (
	// EvConnect: a connection attempt starts (Peer = broker, Detail =
	// "coordinator" for the coordinator connection, else "node"; Count = the
	// failed attempts so far).
	EvConnect EventKind = "connect"
	// EvConnected: the connection is READY (after the handshake and ApiVersions).
	EvConnected EventKind = "connected"
	// EvDisconnected: the connection is closed (Reason: request-timeout,
	// coordinator-dead, setup-timeout, refused, peer-closed, reset;
	// Detail as for EvConnect; Count = the reconnect backoff in ms).
	EvDisconnected EventKind = "disconnected"
)
