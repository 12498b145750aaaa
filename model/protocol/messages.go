package protocol

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/vtime"
)

// Instant is virtual time: nanoseconds since the simulation started. Models
// receive it as an argument and never read a clock. It is vtime.Instant, the
// kernel's sim.Instant too (an alias: one type, no conversions).
type Instant = vtime.Instant

// Never is the instant of a deadline that is not armed (vtime.Never).
const Never = vtime.Never

// APIKey is a Kafka API key with its real number (ApiKeys.java).
type APIKey int16

const (
	APIOffsetCommit    APIKey = 8
	APIFindCoordinator APIKey = 10
	APIJoinGroup       APIKey = 11
	APIHeartbeat       APIKey = 12
	APILeaveGroup      APIKey = 13
	APISyncGroup       APIKey = 14
	// APIConsumerGroupHeartbeat is the consumer group protocol's only
	// membership API (KIP-848; consumer.go).
	APIConsumerGroupHeartbeat APIKey = 68
)

func (k APIKey) String() string {
	switch k {
	case APIOffsetCommit:
		return "OffsetCommit"
	case APIFindCoordinator:
		return "FindCoordinator"
	case APIJoinGroup:
		return "JoinGroup"
	case APIHeartbeat:
		return "Heartbeat"
	case APILeaveGroup:
		return "LeaveGroup"
	case APISyncGroup:
		return "SyncGroup"
	case APIConsumerGroupHeartbeat:
		return "ConsumerGroupHeartbeat"
	}
	return "Unknown"
}

// Request is one of the request values below.
type Request interface {
	API() APIKey
	// Group returns the group id the request is about (the FindCoordinator key).
	Group() string
}

// Response is one of the response values below.
type Response interface {
	API() APIKey
	// Err is the top-level error code of the response.
	Err() ErrorCode
}

// ConsumerProtocolType is the JoinGroup protocol type of a consumer ("consumer").
const ConsumerProtocolType = "consumer"

// UnknownMemberIDValue is JoinGroupRequest.UNKNOWN_MEMBER_ID, the empty member id.
const UnknownMemberIDValue = ""

// NoGeneration is OffsetCommitRequest.DEFAULT_GENERATION_ID / Generation.NO_GENERATION's id.
const NoGeneration int32 = -1

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Less orders partitions by topic, then partition number.
func (tp TopicPartition) Less(o TopicPartition) bool {
	if tp.Topic != o.Topic {
		return tp.Topic < o.Topic
	}
	return tp.Partition < o.Partition
}

// ComparePartitions is a three-way comparison for slices.SortFunc.
func ComparePartitions(a, b TopicPartition) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// Subscription is the consumer protocol's member metadata
// (ConsumerProtocolSubscription), kept structured rather than serialized.
// OwnedPartitions is sent from 2.4 (KIP-429); GenerationID from 3.4 (KIP-792,
// -1 when absent).
type Subscription struct {
	Topics          []string
	OwnedPartitions []TopicPartition
	GenerationID    int32
	UserData        string
}

// Equal is the broker's "metadata matches" test (byte equality of the
// serialized subscription in Kafka).
func (s Subscription) Equal(o Subscription) bool {
	return s.GenerationID == o.GenerationID && s.UserData == o.UserData &&
		slices.Equal(s.Topics, o.Topics) && slices.Equal(s.OwnedPartitions, o.OwnedPartitions)
}

// Assignment is the consumer protocol's assignment (ConsumerProtocolAssignment).
type Assignment struct {
	Partitions []TopicPartition
	UserData   string
}

// GroupProtocol is one (name, metadata) entry of a JoinGroup request, in the
// member's preference order. The name is an assignor name.
type GroupProtocol struct {
	Name     string
	Metadata Subscription
}

// FindCoordinatorRequest asks any broker which broker coordinates a group
// (key type GROUP).
type FindCoordinatorRequest struct {
	Key string
}

// FindCoordinatorResponse carries the coordinator's broker id.
type FindCoordinatorResponse struct {
	Error  ErrorCode
	NodeID int32
}

// JoinGroupRequest mirrors JoinGroupRequestData. Version is the request
// version the client would send (4+ enables KIP-394 on the broker, 5+ carries
// the instance id, 9+ skipAssignment).
type JoinGroupRequest struct {
	ClientID         string // client.id from the request header; the broker builds member ids from it
	GroupID          string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	MemberID         string
	GroupInstanceID  string // "" = dynamic member
	ProtocolType     string
	Protocols        []GroupProtocol
	Reason           string
	Version          int16
}

// JoinGroupMember is one member as the leader sees it in the JoinGroup response.
type JoinGroupMember struct {
	MemberID        string
	GroupInstanceID string
	Metadata        Subscription
}

// JoinGroupResponse mirrors JoinGroupResponseData. Members is filled only for
// the leader.
type JoinGroupResponse struct {
	Error          ErrorCode
	GenerationID   int32
	ProtocolType   string
	ProtocolName   string
	Leader         string
	MemberID       string
	SkipAssignment bool
	Members        []JoinGroupMember
}

// SyncGroupAssignment is one member's assignment in the leader's SyncGroup.
type SyncGroupAssignment struct {
	MemberID   string
	Assignment Assignment
}

// SyncGroupRequest mirrors SyncGroupRequestData. Followers send no assignments.
type SyncGroupRequest struct {
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID string
	ProtocolType    string
	ProtocolName    string
	Assignments     []SyncGroupAssignment
}

// SyncGroupResponse mirrors SyncGroupResponseData.
type SyncGroupResponse struct {
	Error        ErrorCode
	ProtocolType string
	ProtocolName string
	Assignment   Assignment
}

// HeartbeatRequest mirrors HeartbeatRequestData.
type HeartbeatRequest struct {
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID string
}

// HeartbeatResponse mirrors HeartbeatResponseData.
type HeartbeatResponse struct {
	Error ErrorCode
}

// LeaveGroupMember is one member of a batch LeaveGroup (v3+, KIP-345).
type LeaveGroupMember struct {
	MemberID        string
	GroupInstanceID string
	Reason          string
}

// LeaveGroupRequest mirrors LeaveGroupRequestData.
type LeaveGroupRequest struct {
	GroupID string
	Members []LeaveGroupMember
}

// LeaveGroupMemberResponse is the per-member result of a batch LeaveGroup.
type LeaveGroupMemberResponse struct {
	MemberID        string
	GroupInstanceID string
	Error           ErrorCode
}

// LeaveGroupResponse mirrors LeaveGroupResponseData.
type LeaveGroupResponse struct {
	Error   ErrorCode
	Members []LeaveGroupMemberResponse
}

// OffsetCommitRequest mirrors OffsetCommitRequestData; offsets are not
// modelled beyond the partitions they are for.
type OffsetCommitRequest struct {
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID string
	Partitions      []TopicPartition
}

// OffsetCommitResponse carries one error for the whole commit (Kafka answers
// per partition; the simulator's commits always share one fate).
type OffsetCommitResponse struct {
	Error ErrorCode
}

func (*FindCoordinatorRequest) API() APIKey  { return APIFindCoordinator }
func (*JoinGroupRequest) API() APIKey        { return APIJoinGroup }
func (*SyncGroupRequest) API() APIKey        { return APISyncGroup }
func (*HeartbeatRequest) API() APIKey        { return APIHeartbeat }
func (*LeaveGroupRequest) API() APIKey       { return APILeaveGroup }
func (*OffsetCommitRequest) API() APIKey     { return APIOffsetCommit }
func (*FindCoordinatorResponse) API() APIKey { return APIFindCoordinator }
func (*JoinGroupResponse) API() APIKey       { return APIJoinGroup }
func (*SyncGroupResponse) API() APIKey       { return APISyncGroup }
func (*HeartbeatResponse) API() APIKey       { return APIHeartbeat }
func (*LeaveGroupResponse) API() APIKey      { return APILeaveGroup }
func (*OffsetCommitResponse) API() APIKey    { return APIOffsetCommit }

func (r *FindCoordinatorRequest) Group() string { return r.Key }
func (r *JoinGroupRequest) Group() string       { return r.GroupID }
func (r *SyncGroupRequest) Group() string       { return r.GroupID }
func (r *HeartbeatRequest) Group() string       { return r.GroupID }
func (r *LeaveGroupRequest) Group() string      { return r.GroupID }
func (r *OffsetCommitRequest) Group() string    { return r.GroupID }

func (r *FindCoordinatorResponse) Err() ErrorCode { return r.Error }
func (r *JoinGroupResponse) Err() ErrorCode       { return r.Error }
func (r *SyncGroupResponse) Err() ErrorCode       { return r.Error }
func (r *HeartbeatResponse) Err() ErrorCode       { return r.Error }
func (r *LeaveGroupResponse) Err() ErrorCode      { return r.Error }
func (r *OffsetCommitResponse) Err() ErrorCode    { return r.Error }

// ErrorResponse builds the response of the request's API carrying only err:
// what a broker sends when a pre-check fails.
func ErrorResponse(req Request, err ErrorCode) Response {
	switch req.API() {
	case APIFindCoordinator:
		return &FindCoordinatorResponse{Error: err, NodeID: -1}
	case APIJoinGroup:
		return &JoinGroupResponse{Error: err, GenerationID: NoGeneration}
	case APISyncGroup:
		return &SyncGroupResponse{Error: err}
	case APIHeartbeat:
		return &HeartbeatResponse{Error: err}
	case APILeaveGroup:
		return &LeaveGroupResponse{Error: err}
	case APIOffsetCommit:
		return &OffsetCommitResponse{Error: err}
	case APIConsumerGroupHeartbeat:
		// not built here: panics below like an unknown API
	}
	panic("protocol: ErrorResponse: unknown API " + req.API().String())
}
