package coordinator

import (
	"slices"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// The uniform assignor for a group whose members subscribe to different
// topics: UniformHeterogeneousAssignmentBuilder (group-coordinator,
// v8.0.0 … v8.3.0; the two differ only in a Collections.emptyMap →
// Map.of and an initialiser). Balance first, then stickiness:
//
//  1. maybeRevokePartitions: each member keeps its previous target's
//     partitions of the topics it still subscribes to;
//  2. assignRemainingPartitions: the unassigned partitions, topic by topic
//     (topics by partitions per subscriber descending, subscriber count
//     ascending, topic id ascending), each to the least loaded subscriber;
//  3. balance / balanceTopics: up to MAX_ITERATION_COUNT = 16 passes over
//     the topics with two or more subscribers, moving a topic's partitions
//     from its most loaded subscribers to its least loaded ones until no
//     pass moves anything.
//
// Deviations: Java breaks the last topic tie by topic id (a random Uuid);
// here by topic name. Members are numbered in the group's join order, where
// Java numbers them in its member map's hash order (the package's general
// deviation, doc.go).

// uniformMaxIterations is MAX_ITERATION_COUNT.
const uniformMaxIterations = 16

// hetero is the builder's state (the Java fields).
type hetero struct {
	parts       []int32   // partitions of topic t (SubscribedTopicDescriber.numPartitions)
	subscribers [][]int   // topicSubscribers: members subscribed to topic t, ascending
	owners      [][]int32 // targetAssignmentPartitionOwners: topic t's partition owners, -1 none
	sizes       []int     // memberTargetAssignmentSizes
	names       []string  // topic names, for the tie-break
}

// uniformHeterogeneous is UniformHeterogeneousAssignmentBuilder.build
// (v8.3.0). topics are the group's subscription metadata; a member's
// subscription to a topic not among them is ignored, as Java's member
// subscription holds topic ids of existing topics only.
func uniformHeterogeneous(members []assignInput, topics []assign.Topic) [][]protocol.TopicPartition {
	out := make([][]protocol.TopicPartition, len(members))
	h := &hetero{sizes: make([]int, len(members))}
	index := make(map[string]int, len(topics))
	// The constructor: the subscribed topics and each one's subscribers.
	for _, t := range topics {
		var subs []int
		for i := range members {
			if slices.Contains(members[i].topics, t.Name) {
				subs = append(subs, i)
			}
		}
		if len(subs) == 0 {
			continue
		}
		index[t.Name] = len(h.parts)
		h.parts = append(h.parts, t.Partitions)
		h.subscribers = append(h.subscribers, subs)
		owners := make([]int32, t.Partitions)
		for p := range owners {
			owners[p] = -1
		}
		h.owners = append(h.owners, owners)
		h.names = append(h.names, t.Name)
	}
	if len(h.parts) == 0 {
		return out
	}
	// Kafka: UniformHeterogeneousAssignmentBuilder.maybeRevokePartitions @v8.3.0.
	for i := range members {
		for _, p := range members[i].prev {
			t, ok := index[p.Topic]
			if !ok || !slices.Contains(members[i].topics, p.Topic) {
				continue // revoked: the member no longer subscribes to the topic
			}
			if p.Partition < 0 || p.Partition >= h.parts[t] {
				// Not in Java (a topic never shrinks); guards an index.
				continue
			}
			h.sizes[i]++
			h.owners[t][p.Partition] = int32(i)
		}
	}
	// Kafka: computeUnassignedPartitions, assignRemainingPartitions @v8.3.0.
	var unassigned []int
	for t := range h.parts {
		if slices.Contains(h.owners[t], -1) {
			unassigned = append(unassigned, t)
		}
	}
	h.sortTopics(unassigned)
	b := &balancer{h: h}
	for _, t := range unassigned {
		b.initialize(h.subscribers[t])
		for p, o := range h.owners[t] {
			if o == -1 {
				h.assign(t, int32(p), b.nextLeastLoaded())
			}
		}
	}
	// Kafka: balance: the topics with at least two subscribers
	// (canTopicParticipateInReassignment) @v8.3.0.
	var movable []int
	for t := range h.parts {
		if len(h.subscribers[t]) >= 2 {
			movable = append(movable, t)
		}
	}
	if len(movable) > 0 {
		h.balanceTopics(movable)
	}
	for t, owners := range h.owners {
		for p, o := range owners {
			if o >= 0 {
				out[o] = append(out[o], protocol.TopicPartition{Topic: h.names[t], Partition: int32(p)})
			}
		}
	}
	for i := range out {
		slices.SortFunc(out[i], cmpTP)
	}
	return out
}

// sortTopics is sortTopicIds (topicComparator, v8.3.0): partitions per
// subscriber descending, then subscriber count ascending, then topic id
// (here name) ascending. The per-subscriber ratio is compared exactly
// (cross-multiplied) where Java compares doubles: the same order for any
// partition and member counts Kafka allows.
func (h *hetero) sortTopics(ts []int) {
	slices.SortFunc(ts, func(a, b int) int {
		pa, pb := int64(h.parts[a]), int64(h.parts[b])
		sa, sb := int64(len(h.subscribers[a])), int64(len(h.subscribers[b]))
		switch x, y := pb*sa, pa*sb; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		switch {
		case h.names[a] < h.names[b]:
			return -1
		case h.names[a] > h.names[b]:
			return 1
		}
		return 0
	})
}

// assign is assignPartition: partition p of topic t moves to member m.
func (h *hetero) assign(t int, p int32, m int) {
	if o := h.owners[t][p]; o != -1 {
		h.sizes[o]-- // removePartitionFromTargetAssignment
	}
	h.owners[t][p] = int32(m) // addPartitionToTargetAssignment
	h.sizes[m]++
}

// balanceTopics is UniformHeterogeneousAssignmentBuilder.balanceTopics
// (v8.3.0): repeat passes over the topics until a whole pass reassigns
// nothing, at most MAX_ITERATION_COUNT passes.
func (h *hetero) balanceTopics(ts []int) {
	h.sortTopics(ts)
	last := -1
	b := &balancer{h: h}
	for range uniformMaxIterations {
		for k, t := range ts {
			if k == last {
				return
			}
			if n := h.balanceTopic(t, b); n > 0 || last == -1 {
				last = k
			}
		}
	}
}

// balanceTopic is UniformHeterogeneousAssignmentBuilder.balanceTopic
// (v8.3.0): reassign topic t's partitions from its most loaded subscribers
// (each giving up its highest-numbered partition of t first) to its least
// loaded ones until the two ranges differ by at most one. It returns the
// number of partitions moved.
func (h *hetero) balanceTopic(t int, b *balancer) int {
	moved := 0
	if b.initialize(h.subscribers[t]) <= 1 {
		return moved
	}
	owners := h.owners[t]
	// The topic's partitions grouped by owner, then by number.
	parts := make([]int32, len(owners))
	for p := range parts {
		parts[p] = int32(p)
	}
	slices.SortFunc(parts, func(a, b int32) int {
		if owners[a] != owners[b] {
			return int(owners[a] - owners[b])
		}
		return int(a - b)
	})
	// start and end (exclusive) of each owner's run in parts; -1: absent.
	start := make([]int, len(h.sizes))
	end := make([]int, len(h.sizes))
	for i := range start {
		start[i], end[i] = -1, -1
	}
	for i, p := range parts {
		o := owners[p]
		if o < 0 {
			continue // none after assignRemainingPartitions
		}
		if start[o] == -1 {
			start[o] = i
		}
		end[o] = i + 1
	}
	for !b.isBalanced() {
		var most int
		for {
			most = b.nextMostLoaded()
			if most == -1 {
				break
			}
			if end[most] == -1 || end[most]-start[most] <= 0 {
				b.excludeMostLoaded()
				continue
			}
			break
		}
		if most == -1 {
			break
		}
		p := parts[end[most]-1]
		end[most]--
		least := b.nextLeastLoaded()
		if b.isBalanced() {
			break
		}
		h.assign(t, p, least)
		moved++
	}
	return moved
}

// balancer is MemberAssignmentBalancer (v8.3.0): over one topic's
// subscribers sorted by assigned partitions (then index), the range of the
// least loaded members, grown rightwards as partitions are handed to them,
// and the range of the most loaded, grown leftwards as they give some up.
type balancer struct {
	h          *hetero
	sorted     []int
	leastEnd   int // [0, leastEnd): the least loaded range
	leastCount int // its partition count before this round
	nextLeast  int
	mostStart  int // [mostStart, mostEnd): the most loaded range
	mostEnd    int
	mostCount  int
	nextMost   int
}

// initialize is MemberAssignmentBalancer.initialize: it returns the
// difference between the most and the least loaded member's counts.
func (b *balancer) initialize(members []int) int {
	sizes := b.h.sizes
	b.sorted = append(b.sorted[:0], members...)
	slices.SortFunc(b.sorted, func(x, y int) int {
		if sizes[x] != sizes[y] {
			return sizes[x] - sizes[y]
		}
		return x - y
	})
	n := len(b.sorted)
	b.leastEnd, b.leastCount, b.nextLeast = 0, sizes[b.sorted[0]]-1, 0
	b.mostStart, b.mostEnd = n, n
	b.mostCount, b.nextMost = sizes[b.sorted[n-1]]+1, n-1
	return sizes[b.sorted[n-1]] - sizes[b.sorted[0]]
}

// nextLeastLoaded is MemberAssignmentBalancer.nextLeastLoadedMember.
func (b *balancer) nextLeastLoaded() int {
	sizes := b.h.sizes
	if b.nextLeast >= b.leastEnd {
		b.leastCount++
		for b.leastEnd < len(b.sorted) && sizes[b.sorted[b.leastEnd]] == b.leastCount {
			b.leastEnd++
		}
		b.nextLeast = 0
	}
	m := b.sorted[b.nextLeast]
	b.nextLeast++
	return m
}

// nextMostLoaded is MemberAssignmentBalancer.nextMostLoadedMember (-1: no
// member can give a partition up).
func (b *balancer) nextMostLoaded() int {
	sizes := b.h.sizes
	if b.nextMost < b.mostStart {
		if b.mostEnd <= b.mostStart && b.mostStart > 0 {
			b.mostCount = sizes[b.sorted[b.mostStart-1]]
		} else {
			b.mostCount--
		}
		for b.mostStart > 0 && sizes[b.sorted[b.mostStart-1]] == b.mostCount {
			b.mostStart--
		}
		b.nextMost = b.mostEnd - 1
	}
	if b.nextMost < 0 {
		return -1
	}
	m := b.sorted[b.nextMost]
	b.nextMost--
	return m
}

// excludeMostLoaded is MemberAssignmentBalancer.excludeMostLoadedMember.
func (b *balancer) excludeMostLoaded() {
	m := b.sorted[b.nextMost+1]
	b.sorted[b.nextMost+1] = b.sorted[b.mostEnd-1]
	b.sorted[b.mostEnd-1] = m
	b.mostEnd--
}

// isBalanced is MemberAssignmentBalancer.isBalanced.
func (b *balancer) isBalanced() bool { return b.mostCount-b.leastCount <= 1 }
