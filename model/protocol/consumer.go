package protocol

// The consumer group protocol (KIP-848, group.protocol=consumer):
// ConsumerGroupHeartbeat and its error codes (Errors.java, 3.7+).

// Error codes of ConsumerGroupHeartbeat and of commits by consumer members.
const (
	InvalidRequest       ErrorCode = 42  // INVALID_REQUEST
	FencedMemberEpoch    ErrorCode = 110 // FENCED_MEMBER_EPOCH
	UnreleasedInstanceID ErrorCode = 111 // UNRELEASED_INSTANCE_ID
	UnsupportedAssignor  ErrorCode = 112 // UNSUPPORTED_ASSIGNOR
	StaleMemberEpoch     ErrorCode = 113 // STALE_MEMBER_EPOCH
)

// ConsumerErrorCodes lists the consumer-protocol codes above.
var ConsumerErrorCodes = []ErrorCode{InvalidRequest, FencedMemberEpoch, UnreleasedInstanceID, UnsupportedAssignor, StaleMemberEpoch}

func consumerErrorName(e ErrorCode) string {
	switch e {
	case InvalidRequest:
		return "INVALID_REQUEST"
	case FencedMemberEpoch:
		return "FENCED_MEMBER_EPOCH"
	case UnreleasedInstanceID:
		return "UNRELEASED_INSTANCE_ID"
	case UnsupportedAssignor:
		return "UNSUPPORTED_ASSIGNOR"
	case StaleMemberEpoch:
		return "STALE_MEMBER_EPOCH"
	case UnknownServerError, None, RequestTimedOut, NetworkException, CoordinatorLoadInProgress,
		CoordinatorNotAvailable, NotCoordinator, IllegalGeneration, InconsistentGroupProtocol,
		InvalidGroupID, UnknownMemberID, InvalidSessionTimeout, RebalanceInProgress,
		InvalidCommitOffsetSize, GroupAuthorizationFailed, UnsupportedVersion, MemberIDRequired,
		GroupMaxSizeReached, FencedInstanceID, GroupIDNotFound, NotEnoughReplicas,
		NotLeaderOrFollower, UnknownTopicOrPartition, KafkaStorageError, NotEnoughReplicasAfterAppend:
		return "" // the classic codes: errorTable names them
	}
	return ""
}

// Member epochs with a meaning of their own (ConsumerGroupHeartbeatRequest).
const (
	JoinEpoch        int32 = 0  // a member joining (or rejoining after a fence)
	LeaveEpoch       int32 = -1 // a member leaving the group
	StaticLeaveEpoch int32 = -2 // a static member leaving temporarily (it keeps its partitions)
)

// ConsumerGroupHeartbeatRequest is ConsumerGroupHeartbeatRequest (v0/v1).
// A nil slice field was not sent ("null": unchanged since the last full
// request); RebalanceTimeoutMs −1 likewise.
type ConsumerGroupHeartbeatRequest struct {
	GroupID            string
	MemberID           string
	MemberEpoch        int32
	InstanceID         string
	RebalanceTimeoutMs int32
	SubscribedTopics   []string // nil: not sent
	ServerAssignor     string
	// Owned is TopicPartitions: the partitions the member owns (after its
	// revocations); OwnedSent false is the null field, which the broker
	// takes as "still owns everything".
	Owned     []TopicPartition
	OwnedSent bool
}

// API names the request.
func (*ConsumerGroupHeartbeatRequest) API() APIKey { return APIConsumerGroupHeartbeat }

// Group is the request's group id.
func (r *ConsumerGroupHeartbeatRequest) Group() string { return r.GroupID }

// ConsumerGroupHeartbeatResponse is ConsumerGroupHeartbeatResponse.
type ConsumerGroupHeartbeatResponse struct {
	Error               ErrorCode
	MemberID            string
	MemberEpoch         int32
	HeartbeatIntervalMs int32
	// Assignment is the member's assigned partitions (never the ones
	// pending revocation); nil when the response carries none.
	Assignment    []TopicPartition
	HasAssignment bool
}

// API names the response.
func (*ConsumerGroupHeartbeatResponse) API() APIKey { return APIConsumerGroupHeartbeat }

// Err is the response's error code.
func (r *ConsumerGroupHeartbeatResponse) Err() ErrorCode { return r.Error }
