// Package assign holds the consumer's partition assignors: range, roundrobin,
// sticky and cooperative-sticky, mirroring Kafka's RangeAssignor,
// RoundRobinAssignor, StickyAssignor and CooperativeStickyAssignor
// (org.apache.kafka.clients.consumer). They are pure functions of their input;
// members and topics are processed in sorted order so the result never
// depends on map iteration.
package assign

import "github.com/rebalsim/rebalsim/model/protocol"

// RebalanceProtocol is ConsumerPartitionAssignor.RebalanceProtocol.
type RebalanceProtocol int

const (
	Eager RebalanceProtocol = iota
	Cooperative
)

func (p RebalanceProtocol) String() string {
	if p == Cooperative {
		return "COOPERATIVE"
	}
	return "EAGER"
}

// Member is one group member as the leader sees it in the JoinGroup response.
type Member struct {
	ID           string
	InstanceID   string
	Subscription protocol.Subscription
}

// Topic is a topic's metadata as the leader knows it.
type Topic struct {
	Name       string
	Partitions int32
}

// Assignor is ConsumerPartitionAssignor.
type Assignor interface {
	// Name is the protocol name sent in JoinGroup ("range", ...).
	Name() string
	// SupportedProtocols: EAGER only, or EAGER and COOPERATIVE.
	SupportedProtocols() []RebalanceProtocol
	// Assign returns one partition list per member, aligned with members.
	// Each list is sorted (protocol.ComparePartitions).
	Assign(members []Member, topics []Topic) [][]protocol.TopicPartition
}
