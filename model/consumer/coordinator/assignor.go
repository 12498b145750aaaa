package coordinator

import (
	"slices"
	"strings"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// Server-side assignor names (group.consumer.assignors; the first is the default).
const (
	Uniform = "uniform"
	Range   = "range"
)

// assignInput is one member as the target assignment sees it, in group order.
type assignInput struct {
	id, instance string
	topics       []string                  // subscribed topic names, sorted
	prev         []protocol.TopicPartition // its previous target, sorted
}

// homogeneous is ModernGroup.subscriptionType (v8.0.0, v8.3.0): HOMOGENEOUS
// when no member subscribes to anything or every subscribed topic name is
// subscribed by every member; else HETEROGENEOUS. By name, like Java: a
// topic missing from the metadata counts too.
func homogeneous(members []assignInput) bool {
	if len(members) == 0 {
		return true
	}
	first := members[0].topics
	for _, m := range members[1:] {
		// Subscriptions are sorted sets: every name is subscribed by every
		// member iff all members' sets are equal.
		if !slices.Equal(m.topics, first) {
			return false
		}
	}
	return true
}

// assignTarget runs the group's server assignor over its members
// (TargetAssignmentBuilder.build → ConsumerGroupPartitionAssignor.assign).
// topics are the topics of the subscription metadata (subscribed by some
// member and present in the metadata image), in configuration order.
func assignTarget(name string, members []assignInput, topics []assign.Topic) [][]protocol.TopicPartition {
	switch {
	case len(members) == 0:
		return nil
	case name == Range:
		// RangeAssignor.assign (v8.0.0, v8.3.0): assignHomogeneousGroup or
		// assignHeterogeneousGroup; both hand each topic out over its
		// subscribers in sortMemberIds order, which rangeAssign does
		// for either subscription type.
		return rangeAssign(members, topics)
	case homogeneous(members):
		// Kafka: UniformAssignor.assign @v8.3.0 (HOMOGENEOUS).
		return uniform(members, topics)
	}
	// Kafka: UniformAssignor.assign @v8.3.0 (HETEROGENEOUS).
	return uniformHeterogeneous(members, topics)
}

// uniform is UniformHomogeneousAssignmentBuilder (UHAB@4.3 L109-268), every
// member subscribing to every topic: quota ⌊P/M⌋, P mod M members get one
// more; each member keeps its previous target up to its quota (one extra
// while extras remain), then the released and new partitions go, in order,
// to the members below quota. Balanced (sizes differ by at most one) and
// sticky.
func uniform(members []assignInput, topics []assign.Topic) [][]protocol.TopicPartition {
	out := make([][]protocol.TopicPartition, len(members))
	if len(members) == 0 {
		return out
	}
	total := 0
	for _, t := range topics {
		total += int(t.Partitions)
	}
	all := make([]protocol.TopicPartition, 0, total)
	for _, t := range topics {
		for p := int32(0); p < t.Partitions; p++ {
			all = append(all, protocol.TopicPartition{Topic: t.Name, Partition: p})
		}
	}
	quota, extras := len(all)/len(members), len(all)%len(members)
	// Partitions are looked up by index (topic base + partition), not in
	// a map: this runs at every group epoch bump of large groups.
	base := make(map[string]int, len(topics))
	n := 0
	for _, t := range topics {
		base[t.Name] = n
		n += int(t.Partitions)
	}
	indexOf := func(p protocol.TopicPartition) int {
		b, ok := base[p.Topic]
		if !ok || p.Partition < 0 || int(p.Partition) >= n-b {
			return -1
		}
		i := b + int(p.Partition)
		if all[i] != p {
			return -1
		}
		return i
	}
	taken := make([]bool, len(all))
	buf := make([]protocol.TopicPartition, len(all)+len(members))
	for i := range out {
		out[i], buf = buf[:0:quota+1], buf[quota+1:]
	}
	for i, m := range members {
		keep := quota
		if len(m.prev) > quota && extras > 0 {
			keep, extras = quota+1, extras-1
		}
		for _, p := range m.prev {
			if len(out[i]) == keep {
				break
			}
			k := indexOf(p)
			if k < 0 || taken[k] {
				continue
			}
			out[i] = append(out[i], p)
			taken[k] = true
		}
	}
	next := 0
	for i := range members {
		for len(out[i]) < quota {
			for taken[next] {
				next++
			}
			out[i] = append(out[i], all[next])
			taken[next] = true
		}
	}
	for i := range members {
		if extras == 0 {
			break
		}
		if len(out[i]) == quota {
			for next < len(all) && taken[next] {
				next++
			}
			if next == len(all) {
				break
			}
			out[i] = append(out[i], all[next])
			taken[next] = true
			extras--
		}
	}
	for i := range out {
		slices.SortFunc(out[i], cmpTP)
	}
	return out
}

// rangeAssign is the server-side RangeAssignor (RangeAssignor.java,
// v8.0.0 … v8.3.0, unchanged between them): members ordered by
// sortMemberIds; per topic, its subscribers in that order each get a
// contiguous range of ⌊P/S⌋ partitions (S subscribers), the first P mod S
// one more (addPartitionsToAssignment). A member gets partitions only of the
// topics it subscribes to (assignHeterogeneousGroup's TopicMetadata counts
// the topic's subscribers, not the group's members). Not sticky.
func rangeAssign(members []assignInput, topics []assign.Topic) [][]protocol.TopicPartition {
	out := make([][]protocol.TopicPartition, len(members))
	order := sortMemberIDs(members)
	for _, t := range topics {
		subs := 0
		for _, i := range order {
			if slices.Contains(members[i].topics, t.Name) {
				subs++
			}
		}
		if subs == 0 {
			continue
		}
		// Kafka: RangeAssignor.TopicMetadata.maybeComputeQuota @v8.3.0.
		n := int(t.Partitions)
		per, extra := n/subs, n%subs
		next := 0
		for _, i := range order {
			if !slices.Contains(members[i].topics, t.Name) {
				continue
			}
			// Kafka: RangeAssignor.addPartitionsToAssignment @v8.3.0.
			quota := per
			if extra > 0 {
				quota, extra = quota+1, extra-1
			}
			end := min(next+quota, n)
			for p := next; p < end; p++ {
				out[i] = append(out[i], protocol.TopicPartition{Topic: t.Name, Partition: int32(p)})
			}
			next = end
		}
	}
	for i := range out {
		slices.SortFunc(out[i], cmpTP)
	}
	return out
}

// sortMemberIDs is RangeAssignor.sortMemberIds (v8.0.0, v8.3.0): static
// members first, by instance id; then the dynamic ones, by member id. It
// returns member indexes.
func sortMemberIDs(members []assignInput) []int {
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ia, ib := members[a].instance, members[b].instance
		switch {
		case ia != "" && ib != "":
			return strings.Compare(ia, ib)
		case ia != "":
			return -1
		case ib != "":
			return 1
		}
		return strings.Compare(members[a].id, members[b].id)
	})
	return order
}
