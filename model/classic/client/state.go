package client

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// MemberState is AbstractCoordinator.MemberState (2.6.1+ four-state form).
// Profiles before KAFKA-10134 had a single REBALANCING state; the simulator
// reports it as PREPARING_REBALANCE (deviation in naming only). kafka-0.10
// had no explicit state; the simulator derives one for traces.
type MemberState uint8

const (
	Unjoined            MemberState = iota // UNJOINED: not in a group (or reset)
	PreparingRebalance                     // PREPARING_REBALANCE: JoinGroup outstanding
	CompletingRebalance                    // COMPLETING_REBALANCE: JoinGroup answered, SyncGroup outstanding
	Stable                                 // STABLE: SyncGroup answered
)

// String returns Kafka's name of the state.
func (s MemberState) String() string {
	switch s {
	case Unjoined:
		return "UNJOINED"
	case PreparingRebalance:
		return "PREPARING_REBALANCE"
	case CompletingRebalance:
		return "COMPLETING_REBALANCE"
	case Stable:
		return "STABLE"
	}
	return fmt.Sprintf("MemberState(%d)", uint8(s))
}

// hasNotJoinedGroup is MemberState.hasNotJoinedGroup (2.6.1+).
func (s MemberState) hasNotJoinedGroup() bool { return s == Unjoined || s == PreparingRebalance }

// RejoinReason is why requestRejoin was called (AbstractCoordinator
// rejoinReason, sent in JoinGroup from 3.2, KIP-800). It is typed so that
// experiments can group rebalances by cause.
type RejoinReason uint8

const (
	RejoinNone                      RejoinReason = iota
	RejoinInitial                                // the first join of the process (rejoinNeeded starts true)
	RejoinRebalanceInProgress                    // heartbeat answered REBALANCE_IN_PROGRESS
	RejoinUnknownMemberID                        // UNKNOWN_MEMBER_ID reset the generation
	RejoinIllegalGeneration                      // ILLEGAL_GENERATION reset the generation
	RejoinFencedInstanceID                       // FENCED_INSTANCE_ID reset the generation
	RejoinMemberIDRequired                       // MEMBER_ID_REQUIRED: rejoin with the given id (KIP-394)
	RejoinJoinFailed                             // a JoinGroup/SyncGroup failed (retriable or immediate)
	RejoinGenerationResetBeforeSync              // join completed but the heartbeat thread reset the generation meanwhile
	RejoinCooperativeRevocation                  // onJoinComplete revoked partitions (KIP-429 second rebalance)
	RejoinLeftGroup                              // maybeLeaveGroup reset the generation (poll timeout or close)
	RejoinCommitFailed                           // an OffsetCommit answered UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS (CommitFailedException)
	RejoinMetadataChanged                        // the leader's metadata changed since it assigned ("cached metadata has changed")
)

// String returns the reason as it appears in traces.
func (r RejoinReason) String() string {
	switch r {
	case RejoinNone:
		return ""
	case RejoinInitial:
		return "initial-join"
	case RejoinRebalanceInProgress:
		return "rebalance-in-progress"
	case RejoinUnknownMemberID:
		return "unknown-member-id"
	case RejoinIllegalGeneration:
		return "illegal-generation"
	case RejoinFencedInstanceID:
		return "fenced-instance-id"
	case RejoinMemberIDRequired:
		return "member-id-required"
	case RejoinJoinFailed:
		return "join-failed"
	case RejoinGenerationResetBeforeSync:
		return "generation-reset-before-sync"
	case RejoinCooperativeRevocation:
		return "cooperative-revocation"
	case RejoinLeftGroup:
		return "left-group"
	case RejoinCommitFailed:
		return "commit-failed"
	case RejoinMetadataChanged:
		return "metadata-changed"
	}
	return fmt.Sprintf("RejoinReason(%d)", uint8(r))
}

// generation is AbstractCoordinator.Generation: (generationId, memberId,
// protocolName); hasProtocol false stands for a null protocol name.
type generation struct {
	// hb holds the generation's id and member id (GenerationID,
	// MemberID: id, memberID). When hbReady it is the whole Heartbeat
	// request of a generation the JoinGroup response gave, filled when the
	// generation is made (so the value stays immutable): one object
	// (generationSize) instead of a generation and a request, the id and
	// member id kept once. Its GroupID and GroupInstanceID are not part of
	// the generation's identity (same).
	hb          protocol.HeartbeatRequest
	protocol    string
	hasProtocol bool
	hbReady     bool // hb is this generation's Heartbeat request
}

// generationSize is generation's size on 64-bit platforms: a joined
// generation and its Heartbeat request in one allocation (a separate
// 48-byte generation and 64-byte request were two). Change it deliberately.
const generationSize = 80

var _ [generationSize - unsafe.Sizeof(generation{})]struct{} // fails to compile if generation grows

// newGeneration is a generation that carries no Heartbeat request.
func newGeneration(id int32, memberID, proto string, hasProtocol bool) *generation {
	return &generation{hb: protocol.HeartbeatRequest{GenerationID: id, MemberID: memberID}, protocol: proto, hasProtocol: hasProtocol}
}

// id is Generation.generationId.
func (g *generation) id() int32 { return g.hb.GenerationID }

// memberID is Generation.memberId.
func (g *generation) memberID() string { return g.hb.MemberID }

// same is Generation.equals: the id, member id and protocol name.
func (g *generation) same(o *generation) bool {
	return g.id() == o.id() && g.hasProtocol == o.hasProtocol && g.memberID() == o.memberID() && g.protocol == o.protocol
}

// noGeneration is Generation.NO_GENERATION, shared: a Member's generation is
// a pointer to an immutable value, replaced whole when it changes, so the
// Member and every request in flight (reqData.sentGen) hold a pointer, not
// a copy (memory per member at 100,000 members).
var noGeneration = newGeneration(protocol.NoGeneration, "", "", false)

// keepingMemberID is the generation resetStateKeepingMemberID leaves: id
// NO_GENERATION, no protocol, this generation's member id (KAFKA-13419).
func (g *generation) keepingMemberID() *generation {
	return newGeneration(protocol.NoGeneration, g.memberID(), "", false)
}

// unchangedSince is CoordinatorResponseHandler.generationUnchanged: the
// generation a response's request was sent in (sent) is still this one.
// Before 2.6 (KAFKA-9823, b.sentGenCheck false) responses always acted.
func (g *generation) unchangedSince(sent *generation, b *behaviour) bool {
	return !b.sentGenCheck || g.same(sent)
}

// heartbeatRequest is the Heartbeat request of this generation. The request
// value is immutable once sent, so one is shared by every heartbeat of a
// generation (no allocation per heartbeat): the one inside a JoinGroup
// response's generation. Any other generation (a reset one; the
// HeartbeatThread does not heartbeat without a joined generation) gets a new
// request per heartbeat: keeping one would cost 8 bytes of every Member.
func (g *generation) heartbeatRequest(cfg *template, instanceID string) *protocol.HeartbeatRequest {
	if g.hbReady {
		return &g.hb
	}
	req := &protocol.HeartbeatRequest{GroupID: cfg.GroupID, GenerationID: g.id(), MemberID: g.memberID()}
	if cfg.behaviour.staticMembership {
		req.GroupInstanceID = instanceID
	}
	return req
}

// invariant is what holds of every generation value
// (AbstractCoordinator.Generation: NO_GENERATION is (-1, "", null); a
// JoinGroup response gives (generationId, memberId, protocolName), the
// member id "assigned by the group coordinator"):
//   - no id below NO_GENERATION;
//   - a generation without a protocol name has none (hasProtocol false is
//     Java's null), and one of id NO_GENERATION has none (every reset
//     leaves protocolName null: resetStateAndGeneration, MEMBER_ID_REQUIRED);
//   - the generation carrying its Heartbeat request is a JoinGroup
//     response's: it has a protocol and the coordinator's member id.
func (g *generation) invariant() string {
	switch {
	case g.id() < protocol.NoGeneration:
		return "an id below NO_GENERATION"
	case !g.hasProtocol && g.protocol != "":
		return "a protocol name on a generation without one"
	case g.id() == protocol.NoGeneration && g.hasProtocol:
		return "a protocol on NO_GENERATION's id"
	case g.hbReady && (!g.hasProtocol || g.memberID() == ""):
		return "a JoinGroup response's generation without its protocol or member id"
	}
	return ""
}

// hasReset is AbstractCoordinator.hasGenerationReset: id -1 and no protocol
// (the member id may survive, KAFKA-13419).
func (g *generation) hasReset() bool { return g.id() == protocol.NoGeneration && !g.hasProtocol }

// Coordinator-dead reasons (EvCoordinatorDead.Dead; Reason is their text).
const (
	deadSessionTimeout = protocol.DeadSessionTimeout
	deadRequestTimeout = protocol.DeadRequestTimeout
	deadDisconnect     = protocol.DeadDisconnect
	// deadUnavailable: the coordinator connection is in reconnect backoff
	// (checkAndGetCoordinator, "coordinator unavailable").
	deadUnavailable = protocol.DeadCoordinatorUnavailable
)

// deadCoordinatorDead is the reason a connection is closed by
// markCoordinatorUnknown's disconnectAsync (a connection-close reason, not
// a dead-mark reason).
const (
	deadCoordinatorDead = "coordinator-dead"
)

// Validate checks the configuration the way KafkaConsumer's constructor and
// Heartbeat's constructor do, plus what the simulator needs (workload
// distributions, brokers).
func (c *Config) Validate() error {
	b, ok := lookupBehaviour(string(c.Profile))
	if !ok {
		return fmt.Errorf("client: unknown profile %q", c.Profile)
	}
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("client: Name is empty"))
	}
	if c.GroupID == "" {
		errs = append(errs, errors.New("client: group.id is empty"))
	}
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("client: no bootstrap brokers"))
	}
	if len(c.Topics) == 0 {
		errs = append(errs, errors.New("client: no subscribed topics"))
	}
	if c.SessionTimeout <= 0 || c.HeartbeatInterval <= 0 || c.HeartbeatInterval >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("client: heartbeat.interval.ms (%v) must be positive and below session.timeout.ms (%v)", c.HeartbeatInterval, c.SessionTimeout))
	}
	if !b.heartbeatTask && c.MaxPollInterval <= 0 {
		errs = append(errs, errors.New("client: max.poll.interval.ms must be positive"))
	}
	if c.RetryBackoff <= 0 {
		errs = append(errs, errors.New("client: retry.backoff.ms must be positive"))
	}
	if b.exponentialBackoff && c.RetryBackoffMax <= 0 {
		errs = append(errs, errors.New("client: retry.backoff.max.ms must be positive"))
	}
	if c.AutoCommitInterval < 0 {
		errs = append(errs, errors.New("client: auto.commit.interval.ms must not be negative"))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, errors.New("client: request.timeout.ms must be positive"))
	}
	if len(c.Assignors) == 0 {
		errs = append(errs, errors.New("client: partition.assignment.strategy is empty"))
	}
	if c.PollInterval == nil || c.PollTimeout == nil || c.AssignTime == nil || c.CallbackTime == nil {
		errs = append(errs, errors.New("client: workload distributions (PollInterval, PollTimeout, AssignTime, CallbackTime) must all be set"))
	}
	return errors.Join(errs...)
}
