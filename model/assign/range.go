package assign

import "github.com/rebalsim/rebalsim/model/protocol"

// RangeAssignor is org.apache.kafka.clients.consumer.RangeAssignor: per
// topic, the subscribed members in MemberInfo order, each getting a
// contiguous range; the first (partitions mod members) get one extra.
// Deviation: the rack-aware variant (KIP-881, 3.5) is not modelled (no racks).
type RangeAssignor struct{}

func (RangeAssignor) Name() string                            { return RangeName }
func (RangeAssignor) SupportedProtocols() []RebalanceProtocol { return []RebalanceProtocol{Eager} }

// Assign models RangeAssignor.assign(partitionsPerTopic, subscriptions).
func (RangeAssignor) Assign(members []Member, topics []Topic) [][]protocol.TopicPartition {
	ti := newTopicIndex(members, topics)
	order := memberInfoOrder(members)
	checkUniqueIDs(members, memberIDOrder(members))
	// consumersPerTopic, each list in MemberInfo order.
	consumers := make([][]int, len(ti.names))
	for _, m := range order {
		for _, t := range ti.subscribedTopics(&members[m]) {
			consumers[t] = append(consumers[t], m)
		}
	}
	lists := make([][]int32, len(members))
	for t, cs := range consumers {
		if len(cs) == 0 {
			continue
		}
		n := int(ti.parts[t])
		per, extra := n/len(cs), n%len(cs)
		for i, m := range cs {
			start := per*i + min(i, extra)
			length := per
			if i < extra {
				length++
			}
			for p := start; p < start+length; p++ {
				lists[m] = append(lists[m], ti.off[t]+int32(p))
			}
		}
	}
	return build(ti, lists)
}
