package assign

import (
	"slices"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// RoundRobinAssignor is org.apache.kafka.clients.consumer.RoundRobinAssignor:
// all partitions of the subscribed topics sorted (topic, partition), dealt to
// the members in MemberInfo order round-robin, skipping members not
// subscribed to the partition's topic (CircularIterator).
type RoundRobinAssignor struct{}

func (RoundRobinAssignor) Name() string { return RoundRobinName }
func (RoundRobinAssignor) SupportedProtocols() []RebalanceProtocol {
	return []RebalanceProtocol{Eager}
}

// Assign models RoundRobinAssignor.assign(partitionsPerTopic, subscriptions).
func (RoundRobinAssignor) Assign(members []Member, topics []Topic) [][]protocol.TopicPartition {
	ti := newTopicIndex(members, topics)
	order := memberInfoOrder(members)
	checkUniqueIDs(members, memberIDOrder(members))
	subs := make([][]int32, len(members))
	for i := range members {
		subs[i] = ti.subscribedTopics(&members[i])
	}
	lists := make([][]int32, len(members))
	next := 0 // position of the CircularIterator in order
	for t := range ti.names {
		// Every topic in the index has a subscriber, so the skip loop ends
		// within one round.
		for p := int32(0); p < ti.parts[t]; p++ {
			for skipped := 0; ; skipped++ {
				invariant(skipped <= len(order), "round robin: topic without subscriber")
				m := order[next]
				if _, ok := slices.BinarySearch(subs[m], int32(t)); ok {
					break
				}
				next = (next + 1) % len(order)
			}
			m := order[next]
			lists[m] = append(lists[m], ti.off[t]+p)
			next = (next + 1) % len(order)
		}
	}
	return build(ti, lists)
}
