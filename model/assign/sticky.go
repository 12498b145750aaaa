package assign

import (
	"slices"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// StickyAssignor is org.apache.kafka.clients.consumer.StickyAssignor (KIP-54):
// as balanced as possible, and within that, as many partitions as possible
// stay with their previous owner. EAGER only.
//
// Deviation: Kafka's StickyAssignor carries the previous assignment and
// generation in its own userData (StickyAssignor.subscriptionUserData),
// because EAGER members revoke everything before joining; here the client
// model is expected to put them in Subscription.OwnedPartitions and
// Subscription.GenerationID, which this assignor reads.
type StickyAssignor struct {
	// HighestGenerationOnly selects the claim rule of Kafka 2.3–3.4
	// (before KAFKA-14639, see stickyAssign).
	HighestGenerationOnly bool
}

func (StickyAssignor) Name() string                            { return StickyName }
func (StickyAssignor) SupportedProtocols() []RebalanceProtocol { return []RebalanceProtocol{Eager} }

// Assign models AbstractStickyAssignor.assign.
func (a StickyAssignor) Assign(members []Member, topics []Topic) [][]protocol.TopicPartition {
	ti := newTopicIndex(members, topics)
	st := stickyAssign(ti, members, a.HighestGenerationOnly)
	return build(ti, st.lists)
}

// CooperativeStickyAssignor is
// org.apache.kafka.clients.consumer.CooperativeStickyAssignor (KIP-429): the
// sticky assignment, then adjustAssignment removes every partition whose
// owner changes from its new owner for this round, so a partition never
// moves directly from one member to another: the old owner revokes it, rejoins,
// and the next rebalance gives it out. Supports COOPERATIVE and EAGER.
type CooperativeStickyAssignor struct {
	// HighestGenerationOnly selects the claim rule of Kafka 2.4–3.4
	// (before KAFKA-14639, see stickyAssign).
	HighestGenerationOnly bool
}

func (CooperativeStickyAssignor) Name() string { return CooperativeStickyName }

// SupportedProtocols is CooperativeStickyAssignor.supportedProtocols:
// COOPERATIVE preferred, EAGER also accepted.
func (CooperativeStickyAssignor) SupportedProtocols() []RebalanceProtocol {
	return []RebalanceProtocol{Cooperative, Eager}
}

// Assign models CooperativeStickyAssignor.assignPartitions: the sticky
// assignment, then adjustAssignment(assignments, partitionsTransferringOwnership).
func (a CooperativeStickyAssignor) Assign(members []Member, topics []Topic) [][]protocol.TopicPartition {
	ti := newTopicIndex(members, topics)
	st := stickyAssign(ti, members, a.HighestGenerationOnly)
	for m, l := range st.lists {
		st.lists[m] = slices.DeleteFunc(l, func(g int32) bool { return st.transferring(g, int32(m)) })
	}
	return build(ti, st.lists)
}

// noOwner marks a partition without a (valid) previous owner.
const noOwner = -1

// defaultGeneration is AbstractStickyAssignor.DEFAULT_GENERATION: no
// generation in the member's data.
const defaultGeneration = -1

// stickyState is the result of the sticky algorithm: per-member lists of
// global partition ids, and what is needed to find the partitions that
// transfer ownership.
type stickyState struct {
	lists [][]int32
	// prevOwner[g]: the member whose claim on g survived generation checks.
	prevOwner []int32
	// multi[g]: members of the same generation claimed g; Kafka
	// (partitionsWithMultiplePreviousOwners) treats it as transferring.
	multi []bool
}

// transferring reports whether g, assigned to m, changes owner
// (AbstractStickyAssignor.partitionsTransferringOwnership /
// CooperativeStickyAssignor.computePartitionsTransferringOwnership).
// Deviation: Kafka's constrained path marks a partition revoked from a member
// as transferring even when the fill loop hands it back to that same member;
// here a partition that returns to its previous owner does not transfer.
func (st *stickyState) transferring(g, m int32) bool {
	if st.multi[g] {
		return true
	}
	return st.prevOwner[g] != noOwner && st.prevOwner[g] != m
}

// stickyAssign models AbstractStickyAssignor.assign: collect each member's
// previously owned partitions (resolving claims by generation), then the
// constrained algorithm when all subscriptions are equal, else the general one.
//
// highestOnly is the claim rule of AbstractStickyAssignor.allSubscriptionsEqual
// before KAFKA-14639 (fixed in 3.5.0, apache/kafka PR #13550): when all
// subscriptions are equal, only members of the highest generation seen
// have valid owned partitions (a member without a generation only while
// no generation has been seen), and a claim of an older generation is
// dropped even when nobody else claims the partition, so the partition is
// given to a new owner in the same round, without a revocation first. From
// 3.5 every claim counts and the highest generation wins a conflict.
func stickyAssign(ti *topicIndex, members []Member, highestOnly bool) *stickyState {
	order := memberIDOrder(members)
	checkUniqueIDs(members, order)
	P := ti.total()
	st := &stickyState{
		lists:     make([][]int32, len(members)),
		prevOwner: make([]int32, P),
		multi:     make([]bool, P),
	}
	for g := range st.prevOwner {
		st.prevOwner[g] = noOwner
	}
	subs := make([][]int32, len(members))
	for i := range members {
		subs[i] = ti.subscribedTopics(&members[i])
	}
	// claimGen[g]: generation of the surviving (or conflicting) claim on g.
	claimGen := make([]int32, P)
	claimed := make([]bool, P)
	highestOnly = highestOnly && allSubscriptionsEqual(subs)
	maxGen := int32(defaultGeneration)
	// Collect owned partitions, members in id order (Kafka iterates a
	// HashMap here; sorting keeps the result deterministic). A claim counts
	// when the topic still exists and the member still subscribes to it
	// (allSubscriptionsEqual / prepopulateCurrentAssignments).
	for _, m := range order {
		s := &members[m].Subscription
		gen := s.GenerationID
		if gen < defaultGeneration {
			gen = defaultGeneration
		}
		if highestOnly {
			// Kafka 3.4 AbstractStickyAssignor.allSubscriptionsEqual:
			// memberData.generation present and >= maxGeneration, or
			// absent while maxGeneration is DEFAULT_GENERATION.
			if gen < maxGen {
				continue
			}
			if gen > maxGen {
				// A higher generation: every claim so far is invalid.
				for g := range claimed {
					claimed[g], st.prevOwner[g], st.multi[g] = false, noOwner, false
				}
				maxGen = gen
			}
		}
		for _, tp := range s.OwnedPartitions {
			g := ti.global(tp)
			if g < 0 {
				continue
			}
			if _, ok := slices.BinarySearch(subs[m], ti.topicOf(g)); !ok {
				continue
			}
			if !claimed[g] {
				claimed[g], claimGen[g], st.prevOwner[g] = true, gen, int32(m)
				continue
			}
			if st.prevOwner[g] == int32(m) {
				continue // listed twice by the same member
			}
			switch {
			case gen > claimGen[g]:
				// The newer generation wins; older claims are stale.
				claimGen[g], st.prevOwner[g], st.multi[g] = gen, int32(m), false
			case gen == claimGen[g]:
				// "Found multiple consumers ... claiming the same
				// TopicPartition in the same generation": invalidated for all.
				st.prevOwner[g], st.multi[g] = noOwner, true
			default:
				// An older generation: the current claim stands.
			}
		}
	}
	owned := make([][]int32, len(members))
	for g := int32(0); g < int32(P); g++ {
		if o := st.prevOwner[g]; o != noOwner {
			owned[o] = append(owned[o], g)
		}
	}
	if len(members) == 0 || P == 0 {
		return st
	}
	if allSubscriptionsEqual(subs) {
		constrainedAssign(st, order, owned, P)
	} else {
		generalAssign(st, ti, order, subs, owned)
	}
	return st
}

func allSubscriptionsEqual(subs [][]int32) bool {
	for _, s := range subs[1:] {
		if !slices.Equal(s, subs[0]) {
			return false
		}
	}
	return true
}

// constrainedAssign models AbstractStickyAssignor.constrainedAssign (the
// 3.x ConstrainedAssignmentBuilder): every member subscribes to the same
// topics, so the result is exactly balanced — members get minQuota or
// maxQuota partitions, and exactly (P mod n) of them get maxQuota.
// order is the member order (by id); owned[m] is m's valid previous
// partitions, sorted.
func constrainedAssign(st *stickyState, order []int, owned [][]int32, P int) {
	n := len(order)
	minQuota, maxQuota := P/n, (P+n-1)/n
	expectedOverMin := P % n
	overMin := 0
	assigned := make([]bool, P)
	var underMin, exactlyMin []int
	lists := st.lists
	// Reassign previously owned partitions, up to the expected number of
	// partitions per consumer.
	for _, m := range order {
		o := owned[m]
		switch {
		case len(o) < minQuota:
			lists[m] = append(make([]int32, 0, maxQuota), o...)
			underMin = append(underMin, m)
		case len(o) >= maxQuota && overMin < expectedOverMin:
			// Keep maxQuota of the owned partitions and revoke the rest.
			lists[m] = append(make([]int32, 0, maxQuota), o[:maxQuota]...)
			overMin++
			if overMin == expectedOverMin {
				exactlyMin = exactlyMin[:0]
			}
		default:
			// Keep minQuota; this member may still get one more while
			// fewer than expectedOverMin members are above minQuota.
			lists[m] = append(make([]int32, 0, maxQuota), o[:minQuota]...)
			if overMin < expectedOverMin {
				exactlyMin = append(exactlyMin, m)
			}
		}
		for _, g := range lists[m] {
			assigned[g] = true
		}
	}
	// Round-robin the unassigned partitions (sorted) over the members under
	// minQuota (sorted), then one each to members at exactly minQuota.
	g := int32(0)
	nextUnassigned := func() (int32, bool) {
		for ; g < int32(P) && assigned[g]; g++ {
		}
		if g == int32(P) {
			return 0, false
		}
		assigned[g] = true
		return g, true
	}
	for len(underMin) > 0 {
		next := underMin[:0]
		for _, m := range underMin {
			p, ok := nextUnassigned()
			// Cannot fail: the quotas add up to P.
			invariant(ok, "constrainedAssign: members under minQuota but no partitions left")
			lists[m] = append(lists[m], p)
			if len(lists[m]) == minQuota {
				exactlyMin = append(exactlyMin, m)
			} else {
				next = append(next, m)
			}
		}
		underMin = next
	}
	for _, m := range exactlyMin {
		if overMin == expectedOverMin {
			break
		}
		p, ok := nextUnassigned()
		if !ok {
			break
		}
		lists[m] = append(lists[m], p)
		overMin++
	}
	_, left := nextUnassigned()
	invariant(!left, "constrainedAssign: partitions left after all members are full")
}

// generalAssign models AbstractStickyAssignor.generalAssign for members with
// different subscriptions: keep every valid previous assignment, give each
// unassigned partition (fewest potential consumers first) to the eligible
// member with the fewest partitions, then move partitions from a member to
// an eligible member with at least two fewer until no such move exists
// (balance), which is Kafka's isBalanced criterion.
//
// Deviation: Kafka's performReassignments walks partitions in its
// sortedPartitions order and prefers returning a partition to its previous
// owner (PartitionMovements); this simplified loop walks partitions in
// (topic, partition) order and takes the least-loaded eligible member (ties:
// smallest member id). The result is balanced by the same criterion but
// may differ in which partitions move.
func generalAssign(st *stickyState, ti *topicIndex, order []int, subs [][]int32, owned [][]int32) {
	P := ti.total()
	rank := make([]int, len(order)) // member -> position in id order
	for i, m := range order {
		rank[m] = i
	}
	consumers := make([][]int, len(ti.names)) // per topic, eligible members in id order
	for _, m := range order {
		for _, t := range subs[m] {
			consumers[t] = append(consumers[t], m)
		}
	}
	owner := make([]int32, P)
	for g := range owner {
		owner[g] = noOwner
	}
	size := make([]int, len(order))
	for m, o := range owned {
		for _, g := range o {
			owner[g] = int32(m)
		}
		size[m] = len(o)
	}
	leastLoaded := func(t int32) int {
		best := -1
		for _, c := range consumers[t] {
			if best < 0 || size[c] < size[best] || (size[c] == size[best] && rank[c] < rank[best]) {
				best = c
			}
		}
		return best
	}
	// Unassigned partitions, fewest potential consumers first
	// (sortPartitions on a fresh assignment), then (topic, partition).
	var unassigned []int32
	for g := int32(0); g < int32(P); g++ {
		if owner[g] == noOwner {
			unassigned = append(unassigned, g)
		}
	}
	slices.SortStableFunc(unassigned, func(a, b int32) int {
		return len(consumers[ti.topicOf(a)]) - len(consumers[ti.topicOf(b)])
	})
	for _, g := range unassigned {
		c := leastLoaded(ti.topicOf(g))
		invariant(c >= 0, "generalAssign: partition of a topic nobody subscribes to")
		owner[g] = int32(c)
		size[c]++
	}
	// Balance. Each move lowers the sum of squared sizes, so the loop ends;
	// the pass bound is a safety net.
	for pass := 0; pass <= P; pass++ {
		moved := false
		for g := int32(0); g < int32(P); g++ {
			c := int(owner[g])
			d := leastLoaded(ti.topicOf(g))
			if size[c] > size[d]+1 {
				owner[g] = int32(d)
				size[c]--
				size[d]++
				moved = true
			}
		}
		if !moved {
			break
		}
		invariant(pass < P, "generalAssign: balancing did not converge")
	}
	for g := int32(0); g < int32(P); g++ {
		st.lists[owner[g]] = append(st.lists[owner[g]], g)
	}
}
