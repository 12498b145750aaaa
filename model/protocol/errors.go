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

// errorTable is the one list of the codes above (kerr-style): String,
// Retriable and AllErrorCodes are all read from it. retriable is whether
// Kafka's exception class for the code extends RetriableException
// (org.apache.kafka.common.errors). Numeric order.
var errorTable = []struct {
	code      ErrorCode
	name      string
	retriable bool
}{
	{UnknownServerError, "UNKNOWN_SERVER_ERROR", false},
	{None, "NONE", false},
	{UnknownTopicOrPartition, "UNKNOWN_TOPIC_OR_PARTITION", true},
	{NotLeaderOrFollower, "NOT_LEADER_OR_FOLLOWER", true},
	{RequestTimedOut, "REQUEST_TIMED_OUT", true},
	{NetworkException, "NETWORK_EXCEPTION", true},
	{CoordinatorLoadInProgress, "COORDINATOR_LOAD_IN_PROGRESS", true},
	{CoordinatorNotAvailable, "COORDINATOR_NOT_AVAILABLE", true},
	{NotCoordinator, "NOT_COORDINATOR", true},
	{NotEnoughReplicas, "NOT_ENOUGH_REPLICAS", true},
	{NotEnoughReplicasAfterAppend, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true},
	{IllegalGeneration, "ILLEGAL_GENERATION", false},
	{InconsistentGroupProtocol, "INCONSISTENT_GROUP_PROTOCOL", false},
	{InvalidGroupID, "INVALID_GROUP_ID", false},
	{UnknownMemberID, "UNKNOWN_MEMBER_ID", false},
	{InvalidSessionTimeout, "INVALID_SESSION_TIMEOUT", false},
	{RebalanceInProgress, "REBALANCE_IN_PROGRESS", false},
	{InvalidCommitOffsetSize, "INVALID_COMMIT_OFFSET_SIZE", false},
	{GroupAuthorizationFailed, "GROUP_AUTHORIZATION_FAILED", false},
	{UnsupportedVersion, "UNSUPPORTED_VERSION", false},
	{KafkaStorageError, "KAFKA_STORAGE_ERROR", true},
	{GroupIDNotFound, "GROUP_ID_NOT_FOUND", false},
	{MemberIDRequired, "MEMBER_ID_REQUIRED", false},
	{GroupMaxSizeReached, "GROUP_MAX_SIZE_REACHED", false},
	{FencedInstanceID, "FENCED_INSTANCE_ID", false},
}

// AllErrorCodes lists every code of errorTable, in numeric order, for tests
// and docs.
var AllErrorCodes = func() []ErrorCode {
	codes := make([]ErrorCode, len(errorTable))
	for i, e := range errorTable {
		codes[i] = e.code
	}
	return codes
}()

// errorIndex maps code+1 to its errorTable row + 1 (0: not in the table),
// so String and Retriable cost one array read.
var errorIndex = func() (idx [128]uint8) {
	for i, e := range errorTable {
		idx[int(e.code)+1] = uint8(i + 1)
	}
	return idx
}()

func errorRow(e ErrorCode) int {
	if k := int(e) + 1; k >= 0 && k < len(errorIndex) {
		return int(errorIndex[k]) - 1
	}
	return -1
}

// String returns Kafka's name for the code, e.g. "REBALANCE_IN_PROGRESS".
func (e ErrorCode) String() string {
	if i := errorRow(e); i >= 0 {
		return errorTable[i].name
	}
	if n := consumerErrorName(e); n != "" {
		return n
	}
	return fmt.Sprintf("ERROR_%d", int16(e))
}

// Retriable reports whether Kafka classifies the error as a RetriableException
// (the exception class's superclass in org.apache.kafka.common.errors). Codes
// outside the table (the consumer protocol's, unknown ones) are not.
func (e ErrorCode) Retriable() bool {
	i := errorRow(e)
	return i >= 0 && errorTable[i].retriable
}
