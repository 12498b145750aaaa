package assign

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Assignor names, as sent in JoinGroup (ConsumerPartitionAssignor.name()).
const (
	RangeName             = "range"
	RoundRobinName        = "roundrobin"
	StickyName            = "sticky"
	CooperativeStickyName = "cooperative-sticky"
)

// ByName returns the assignor of that protocol name.
func ByName(name string) (Assignor, bool) {
	switch name {
	case RangeName:
		return RangeAssignor{}, true
	case RoundRobinName:
		return RoundRobinAssignor{}, true
	case StickyName:
		return StickyAssignor{}, true
	case CooperativeStickyName:
		return CooperativeStickyAssignor{}, true
	}
	return nil, false
}

// Names returns the assignor names ByName knows, sorted.
func Names() []string {
	return []string{CooperativeStickyName, RangeName, RoundRobinName, StickyName}
}

func invariant(cond bool, msg string) {
	if !cond {
		panic("assign: " + msg)
	}
}

// topicIndex is the metadata of the topics that at least one member
// subscribes to and that exist, sorted by name, with every partition given a
// dense global id: topic t's partition p is off[t]+p.
// (AbstractPartitionAssignor.assign builds partitionsPerTopic the same way:
// subscribed topics present in metadata.)
type topicIndex struct {
	names []string
	parts []int32
	off   []int32 // len(names)+1; off[len] is the partition total
	byTop map[string]int32
}

func newTopicIndex(members []Member, topics []Topic) *topicIndex {
	subscribed := make(map[string]bool)
	for i := range members {
		for _, t := range members[i].Subscription.Topics {
			subscribed[t] = true
		}
	}
	ts := make([]Topic, 0, len(topics))
	for _, t := range topics {
		if subscribed[t.Name] && t.Partitions > 0 {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b Topic) int { return strings.Compare(a.Name, b.Name) })
	ts = slices.CompactFunc(ts, func(a, b Topic) bool { return a.Name == b.Name })
	ti := &topicIndex{
		names: make([]string, len(ts)),
		parts: make([]int32, len(ts)),
		off:   make([]int32, len(ts)+1),
		byTop: make(map[string]int32, len(ts)),
	}
	for i, t := range ts {
		ti.names[i] = t.Name
		ti.parts[i] = t.Partitions
		ti.off[i+1] = ti.off[i] + t.Partitions
		ti.byTop[t.Name] = int32(i)
	}
	return ti
}

func (ti *topicIndex) total() int { return int(ti.off[len(ti.names)]) }

// global returns tp's global id, or -1 when the topic is not in the index or
// the partition does not exist.
func (ti *topicIndex) global(tp protocol.TopicPartition) int32 {
	t, ok := ti.byTop[tp.Topic]
	if !ok || tp.Partition < 0 || tp.Partition >= ti.parts[t] {
		return -1
	}
	return ti.off[t] + tp.Partition
}

// topicOf returns the topic index of global partition g.
func (ti *topicIndex) topicOf(g int32) int32 {
	i, found := slices.BinarySearch(ti.off, g)
	if found {
		// g is the first partition of topic i; skip empty topics (none kept).
		return int32(i)
	}
	return int32(i - 1)
}

func (ti *topicIndex) partition(g int32) protocol.TopicPartition {
	t := ti.topicOf(g)
	return protocol.TopicPartition{Topic: ti.names[t], Partition: g - ti.off[t]}
}

// subscribedTopics returns member m's subscribed topic indexes, sorted and
// deduplicated; unknown topics are left out (Java: "skipping assignment for
// topic ... since no metadata is available").
func (ti *topicIndex) subscribedTopics(m *Member) []int32 {
	out := make([]int32, 0, len(m.Subscription.Topics))
	for _, t := range m.Subscription.Topics {
		if i, ok := ti.byTop[t]; ok {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// memberInfoOrder returns member indexes in MemberInfo.compareTo order
// (AbstractPartitionAssignor.MemberInfo, KIP-345): members with a
// group.instance.id first, by instance id, then the others by member id.
// With no static members this is member-id order.
func memberInfoOrder(members []Member) []int {
	idx := make([]int, len(members))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ma, mb := &members[a], &members[b]
		switch {
		case ma.InstanceID != "" && mb.InstanceID != "":
			if c := strings.Compare(ma.InstanceID, mb.InstanceID); c != 0 {
				return c
			}
			return strings.Compare(ma.ID, mb.ID)
		case ma.InstanceID != "":
			return -1
		case mb.InstanceID != "":
			return 1
		}
		return strings.Compare(ma.ID, mb.ID)
	})
	return idx
}

// memberIDOrder returns member indexes sorted by member id (the sticky
// assignors sort consumer ids: Collections.sort(unfilledMembers)).
func memberIDOrder(members []Member) []int {
	idx := make([]int, len(members))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(members[a].ID, members[b].ID) })
	return idx
}

// build converts per-member global-id lists into sorted partition lists
// sharing one backing array (each capped, so appends never overlap).
func build(ti *topicIndex, lists [][]int32) [][]protocol.TopicPartition {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	backing := make([]protocol.TopicPartition, 0, n)
	out := make([][]protocol.TopicPartition, len(lists))
	for i, l := range lists {
		slices.Sort(l)
		start := len(backing)
		for _, g := range l {
			backing = append(backing, ti.partition(g))
		}
		out[i] = backing[start:len(backing):len(backing)]
	}
	return out
}

func checkUniqueIDs(members []Member, order []int) {
	for i := 1; i < len(order); i++ {
		invariant(members[order[i-1]].ID != members[order[i]].ID, "duplicate member id "+members[order[i]].ID)
	}
}
