package coordinator

import (
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
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
}

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
	MemberID         string
	GroupInstanceID  string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	Protocols        []protocol.GroupProtocol
	Assignment       protocol.Assignment
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

// Reset empties the buffers, keeping capacity.
func (o *Output) Reset() {
	o.Replies = o.Replies[:0]
	o.Events = o.Events[:0]
	o.Persist = o.Persist[:0]
}
