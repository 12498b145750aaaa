package coordinator

import (
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/vtime"
)

// Config is one broker's group-coordinator configuration (Kafka broker
// property names in the comments). The harness fills every field.
type Config struct {
	BrokerID              int32
	Name                  string // node name in traces, e.g. "broker-1"
	Profile               Profile
	InitialRebalanceDelay time.Duration // group.initial.rebalance.delay.ms
	MinSessionTimeout     time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout     time.Duration // group.max.session.timeout.ms
	MaxSize               int           // group.max.size
	NewMemberJoinTimeout  time.Duration // NewMemberJoinTimeoutMs (300 s, not configurable in Kafka)

	// The group-record append (GroupMetadataManager.storeGroup: an
	// acks=all append to __consumer_offsets). With every field below at
	// its zero value the append completes synchronously inside the call
	// that makes it and always succeeds (the behaviour before these fields
	// existed: the output is byte-identical). See append.go.

	// AppendLatency is the time from storeGroup to the append completing
	// (local write + replication to the ISR). nil: 0. Negative draws count
	// as 0. Appends of one group complete in order (the log is ordered): an
	// append never completes before the one made before it.
	AppendLatency Dist
	// AppendBytesPerSecond adds size/AppendBytesPerSecond to each append's
	// latency, where size is the estimated serialized group record
	// (recordSize in append.go). 0: no size term.
	AppendBytesPerSecond int64
	// AppendTimeout is offsets.commit.timeout.ms (Kafka default 5 s): an
	// append whose latency exceeds it fails with REQUEST_TIMED_OUT at the
	// timeout. 0: no timeout.
	AppendTimeout time.Duration
	// AppendErrorProbability is the probability, drawn from Rand for each
	// append, that it fails with AppendError. 0: appends never fail.
	AppendErrorProbability float64
	// AppendError is the raw log-append error of a failing append; one of
	// NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
	// UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR,
	// REQUEST_TIMED_OUT. Required when AppendErrorProbability > 0. The
	// caller sees it mapped as in storeGroup (mapAppendError).
	AppendError protocol.ErrorCode
	// AppendLinger is group.coordinator.append.linger.ms of the Java group
	// coordinator (4.x profiles; the Scala coordinator appends each write
	// on its own and ignores it): a write opens a batch that is flushed
	// this long after, and the writes made meanwhile join it (linger.go).
	// 0: no linger (the adaptive linger of 4.2+, -1, is 0 here).
	AppendLinger time.Duration
	// Rand is the broker's random stream for AppendLatency draws and
	// AppendErrorProbability. It may be nil when AppendErrorProbability is
	// 0 and AppendLatency is nil or ignores its argument (a constant).
	Rand *rand.Rand
}

// Dist draws a duration from an explicit random stream (vtime.Dist: sim's
// distributions are the same type).
type Dist = vtime.Dist

// Const is a Dist that always returns its value (vtime.Const).
type Const = vtime.Const

// Conn identifies the client connection a request came in on. The harness
// assigns it (one per member process); replies go back to it.
type Conn int32

// Reply is a response to a request received earlier on Conn. A parked
// JoinGroup or SyncGroup is answered in a later call's Output.
type Reply struct {
	Conn Conn
	Corr uint64
	Resp protocol.Response
}

// MemberRecord is one member in the persisted group record.
type MemberRecord struct {
	MemberID string
	// *MemberConfig is the member's instance id, timeouts and protocols,
	// shared with the member and with the other members that joined with
	// the same ones (one pointer a record: memberRecordSize).
	*MemberConfig
	Assignment protocol.Assignment
}

// memberRecordSize is MemberRecord's size on 64-bit platforms: a group
// record holds one per member and the broker keeps the latest record of
// every group, so it counts per member like memberSize.
const memberRecordSize = 64

var _ [memberRecordSize - unsafe.Sizeof(MemberRecord{})]struct{} // fails to compile if MemberRecord grows

// MemberConfig is what a member's JoinGroup set that its group keeps: the
// group.instance.id ("" for a dynamic member), the timeouts and the
// protocols. Immutable once made: a member's change
// replaces it whole, so one value is shared by every member (and record)
// that has the same ones; in an eager group, whose members send one shared
// protocol list, that is every member of a cohort (Broker.config).
type MemberConfig struct {
	GroupInstanceID  string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	Protocols        []protocol.GroupProtocol
}

// GroupRecord is the group metadata record written to __consumer_offsets
// (GroupMetadataManager.storeGroup): only Stable or Empty groups are ever
// persisted. The harness keeps the latest one and hands it to the broker that
// loads the group after a failover.
type GroupRecord struct {
	GroupID      string
	GenerationID int32
	ProtocolType string
	ProtocolName string
	Leader       string
	Members      []MemberRecord // sorted by MemberID
}

// Output collects what one call into the broker produced, in order.
type Output struct {
	Replies []Reply
	Events  []protocol.Event
	Persist []GroupRecord
}

// Reset empties the buffers, keeping capacity up to outputKeep entries.
// The entries are zeroed: a stale reply would keep its response (and a stale
// record its members) alive until the slot is overwritten, which after a
// rebalance of n members is n JoinGroup and SyncGroup responses for good
// (memory per member that no member needs). A buffer a burst grew beyond outputKeep is
// dropped, so the burst's capacity is not kept either.
func (o *Output) Reset() {
	o.Replies = resetBuf(o.Replies)
	o.Events = resetBuf(o.Events)
	o.Persist = resetBuf(o.Persist)
}

// outputKeep is the capacity an Output buffer keeps across Reset: more than
// a steady flush needs, so the steady state does not allocate.
const outputKeep = 256

func resetBuf[T any](s []T) []T {
	if cap(s) > outputKeep {
		return nil
	}
	clear(s)
	return s[:0]
}
