package protocol

import "fmt"

// ErrorCode is a Kafka protocol error code, with the real numbers from
// org.apache.kafka.common.protocol.Errors. Protocol errors are data: the
// coordinator answers with one in a response value and the client handles
// each in one exhaustive switch.
type ErrorCode int16

// The error codes the classic group protocol uses (Errors.java).
const (
	UnknownServerError           ErrorCode = -1 // UNKNOWN_SERVER_ERROR
	None                         ErrorCode = 0  // NONE
	RequestTimedOut              ErrorCode = 7  // REQUEST_TIMED_OUT
	NetworkException             ErrorCode = 13 // NETWORK_EXCEPTION (used for simulated disconnects)
	CoordinatorLoadInProgress    ErrorCode = 14 // COORDINATOR_LOAD_IN_PROGRESS (GROUP_LOAD_IN_PROGRESS before 0.11)
	CoordinatorNotAvailable      ErrorCode = 15 // COORDINATOR_NOT_AVAILABLE (GROUP_COORDINATOR_NOT_AVAILABLE before 0.11)
	NotCoordinator               ErrorCode = 16 // NOT_COORDINATOR (NOT_COORDINATOR_FOR_GROUP before 0.11)
	IllegalGeneration            ErrorCode = 22 // ILLEGAL_GENERATION
	InconsistentGroupProtocol    ErrorCode = 23 // INCONSISTENT_GROUP_PROTOCOL
	InvalidGroupID               ErrorCode = 24 // INVALID_GROUP_ID
	UnknownMemberID              ErrorCode = 25 // UNKNOWN_MEMBER_ID
	InvalidSessionTimeout        ErrorCode = 26 // INVALID_SESSION_TIMEOUT
	RebalanceInProgress          ErrorCode = 27 // REBALANCE_IN_PROGRESS
	InvalidCommitOffsetSize      ErrorCode = 28 // INVALID_COMMIT_OFFSET_SIZE
	GroupAuthorizationFailed     ErrorCode = 30 // GROUP_AUTHORIZATION_FAILED
	UnsupportedVersion           ErrorCode = 35 // UNSUPPORTED_VERSION
	MemberIDRequired             ErrorCode = 79 // MEMBER_ID_REQUIRED (KIP-394)
	GroupMaxSizeReached          ErrorCode = 81 // GROUP_MAX_SIZE_REACHED (KIP-389)
	FencedInstanceID             ErrorCode = 82 // FENCED_INSTANCE_ID (KIP-345)
	GroupIDNotFound              ErrorCode = 69 // GROUP_ID_NOT_FOUND
	NotEnoughReplicas            ErrorCode = 19 // NOT_ENOUGH_REPLICAS
	NotLeaderOrFollower          ErrorCode = 6  // NOT_LEADER_OR_FOLLOWER
	UnknownTopicOrPartition      ErrorCode = 3  // UNKNOWN_TOPIC_OR_PARTITION
	KafkaStorageError            ErrorCode = 56 // KAFKA_STORAGE_ERROR
	NotEnoughReplicasAfterAppend ErrorCode = 20 // NOT_ENOUGH_REPLICAS_AFTER_APPEND
)

// AllErrorCodes lists every code above, in numeric order, for tests and docs.
var AllErrorCodes = []ErrorCode{
	UnknownServerError, None, UnknownTopicOrPartition, NotLeaderOrFollower, RequestTimedOut,
	NetworkException, CoordinatorLoadInProgress, CoordinatorNotAvailable, NotCoordinator,
	NotEnoughReplicas, NotEnoughReplicasAfterAppend, IllegalGeneration, InconsistentGroupProtocol,
	InvalidGroupID, UnknownMemberID, InvalidSessionTimeout, RebalanceInProgress,
	InvalidCommitOffsetSize, GroupAuthorizationFailed, UnsupportedVersion, KafkaStorageError,
	GroupIDNotFound, MemberIDRequired, GroupMaxSizeReached, FencedInstanceID,
}

// String returns Kafka's name for the code, e.g. "REBALANCE_IN_PROGRESS".
func (e ErrorCode) String() string {
	switch e {
	case UnknownServerError:
		return "UNKNOWN_SERVER_ERROR"
	case None:
		return "NONE"
	case UnknownTopicOrPartition:
		return "UNKNOWN_TOPIC_OR_PARTITION"
	case NotLeaderOrFollower:
		return "NOT_LEADER_OR_FOLLOWER"
	case RequestTimedOut:
		return "REQUEST_TIMED_OUT"
	case NetworkException:
		return "NETWORK_EXCEPTION"
	case CoordinatorLoadInProgress:
		return "COORDINATOR_LOAD_IN_PROGRESS"
	case CoordinatorNotAvailable:
		return "COORDINATOR_NOT_AVAILABLE"
	case NotCoordinator:
		return "NOT_COORDINATOR"
	case NotEnoughReplicas:
		return "NOT_ENOUGH_REPLICAS"
	case NotEnoughReplicasAfterAppend:
		return "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
	case IllegalGeneration:
		return "ILLEGAL_GENERATION"
	case InconsistentGroupProtocol:
		return "INCONSISTENT_GROUP_PROTOCOL"
	case InvalidGroupID:
		return "INVALID_GROUP_ID"
	case UnknownMemberID:
		return "UNKNOWN_MEMBER_ID"
	case InvalidSessionTimeout:
		return "INVALID_SESSION_TIMEOUT"
	case RebalanceInProgress:
		return "REBALANCE_IN_PROGRESS"
	case InvalidCommitOffsetSize:
		return "INVALID_COMMIT_OFFSET_SIZE"
	case GroupAuthorizationFailed:
		return "GROUP_AUTHORIZATION_FAILED"
	case UnsupportedVersion:
		return "UNSUPPORTED_VERSION"
	case KafkaStorageError:
		return "KAFKA_STORAGE_ERROR"
	case GroupIDNotFound:
		return "GROUP_ID_NOT_FOUND"
	case MemberIDRequired:
		return "MEMBER_ID_REQUIRED"
	case GroupMaxSizeReached:
		return "GROUP_MAX_SIZE_REACHED"
	case FencedInstanceID:
		return "FENCED_INSTANCE_ID"
	}
	if n := consumerErrorName(e); n != "" {
		return n
	}
	return fmt.Sprintf("ERROR_%d", int16(e))
}

// Retriable reports whether Kafka classifies the error as a RetriableException
// (the exception class's superclass in org.apache.kafka.common.errors).
func (e ErrorCode) Retriable() bool {
	switch e {
	case RequestTimedOut, NetworkException, CoordinatorLoadInProgress, CoordinatorNotAvailable,
		NotCoordinator, NotEnoughReplicas, NotEnoughReplicasAfterAppend, NotLeaderOrFollower,
		UnknownTopicOrPartition, KafkaStorageError:
		return true
	case UnknownServerError, None, IllegalGeneration, InconsistentGroupProtocol, InvalidGroupID,
		UnknownMemberID, InvalidSessionTimeout, RebalanceInProgress, InvalidCommitOffsetSize,
		GroupAuthorizationFailed, UnsupportedVersion, GroupIDNotFound, MemberIDRequired,
		GroupMaxSizeReached, FencedInstanceID:
		return false
	}
	return false
}
