package coordinator

import (
	"slices"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// MemberState is the broker's reconciliation state of one member
// (org.apache.kafka.coordinator.group.modern.MemberState).
type MemberState uint8

const (
	Stable               MemberState = iota // STABLE: assigned = target, epoch = target epoch
	UnrevokedPartitions                     // UNREVOKED_PARTITIONS: must give up partitions first
	UnreleasedPartitions                    // UNRELEASED_PARTITIONS: waits for partitions others still own
	Unknown                                 // UNKNOWN
)

func (s MemberState) String() string {
	switch s {
	case Stable:
		return "STABLE"
	case UnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case UnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	case Unknown:
		return "UNKNOWN"
	}
	return "?"
}

// assignment is what CurrentAssignmentBuilder reads and writes of a member.
type assignment struct {
	state     MemberState
	epoch     int32
	prevEpoch int32
	assigned  []protocol.TopicPartition // sorted
	revoking  []protocol.TopicPartition // partitionsPendingRevocation, sorted
}

// ownerEpoch is currentPartitionEpoch: the epoch of the member that owns p
// (assigned or pending revocation), or −1 when p is free.
type ownerEpoch func(p protocol.TopicPartition) int32

// reconcile is CurrentAssignmentBuilder.build (CAB@4.3 L187-257) for a
// member whose target is target at targetEpoch. owned is the request's
// ownedTopicPartitions (ownedSent false: the field was null, which counts
// as still owning everything).
func (b *behaviour) reconcile(cur assignment, target []protocol.TopicPartition, targetEpoch int32,
	owner ownerEpoch, owned []protocol.TopicPartition, ownedSent bool) (assignment, error) {
	stillOwns := func(revoking []protocol.TopicPartition) bool {
		if !ownedSent {
			return true
		}
		for _, p := range revoking {
			if contains(owned, p) {
				return true
			}
		}
		return false
	}
	switch cur.state {
	case Stable:
		if cur.epoch != targetEpoch {
			return b.computeNext(cur, cur.epoch, target, targetEpoch, owner, owned, ownedSent, stillOwns), nil
		}
		return cur, nil
	case UnrevokedPartitions:
		if stillOwns(cur.revoking) {
			return cur, nil
		}
		e := cur.epoch
		if b.unrevokedEpochPlusOne {
			e++ // 3.8–4.1 (KAFKA-19974 fixed it in 4.2)
		}
		return b.computeNext(cur, e, target, targetEpoch, owner, owned, ownedSent, stillOwns), nil
	case UnreleasedPartitions:
		return b.computeNext(cur, cur.epoch, target, targetEpoch, owner, owned, ownedSent, stillOwns), nil
	case Unknown:
		if !ownedSent || len(owned) > 0 {
			return cur, errFenced
		}
		return b.computeNext(cur, targetEpoch, target, targetEpoch, owner, owned, ownedSent, stillOwns), nil
	}
	return cur, nil
}

// computeNext is CurrentAssignmentBuilder.computeNextAssignment(e)
// (CAB@4.3 L270-360): revocation first; then the partitions that are free;
// the epoch advances to the target's even while some are unreleased.
func (b *behaviour) computeNext(cur assignment, e int32, target []protocol.TopicPartition, targetEpoch int32,
	owner ownerEpoch, owned []protocol.TopicPartition, ownedSent bool, stillOwns func([]protocol.TopicPartition) bool) assignment {
	var newAssigned, revoking, pending []protocol.TopicPartition
	for _, p := range cur.assigned {
		if contains(target, p) {
			newAssigned = append(newAssigned, p)
		} else {
			revoking = append(revoking, p)
		}
	}
	unreleased := false
	for _, p := range target {
		if contains(newAssigned, p) {
			continue
		}
		if o := owner(p); o != -1 && !(b.ownRevocationNotUnreleased && contains(cur.revoking, p)) {
			unreleased = true // still owned by someone else (KAFKA-19449: not by itself, 4.2+)
			continue
		}
		pending = append(pending, p)
	}
	next := assignment{prevEpoch: cur.epoch}
	switch {
	case len(revoking) > 0 && stillOwns(revoking):
		next.state, next.epoch = UnrevokedPartitions, e
		next.assigned, next.revoking = newAssigned, revoking
	case len(pending) > 0:
		next.state, next.epoch = Stable, targetEpoch
		if unreleased {
			next.state = UnreleasedPartitions
		}
		next.assigned = sortedUnion(newAssigned, pending)
	case unreleased:
		next.state, next.epoch, next.assigned = UnreleasedPartitions, targetEpoch, newAssigned
	default:
		next.state, next.epoch, next.assigned = Stable, targetEpoch, newAssigned
	}
	return next
}

func contains(l []protocol.TopicPartition, p protocol.TopicPartition) bool {
	_, ok := slices.BinarySearchFunc(l, p, cmpTP)
	return ok
}

func cmpTP(a, b protocol.TopicPartition) int {
	switch {
	case a.Topic < b.Topic:
		return -1
	case a.Topic > b.Topic:
		return 1
	case a.Partition < b.Partition:
		return -1
	case a.Partition > b.Partition:
		return 1
	}
	return 0
}

func sortedUnion(a, b []protocol.TopicPartition) []protocol.TopicPartition {
	out := make([]protocol.TopicPartition, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	slices.SortFunc(out, cmpTP)
	return slices.CompactFunc(out, func(x, y protocol.TopicPartition) bool { return x == y })
}
