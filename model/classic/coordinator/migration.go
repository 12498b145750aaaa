package coordinator

import (
	"github.com/rebalsim/rebalsim/model/protocol"
)

// The classic side of the online migration between classic and consumer
// groups (kafka-consumer-protocol.md §4). The consumer group itself is
// served by package coordinator/consumer; the harness hands a group across.
// Cited methods are those of confluentinc/kafka tag v8.0.0 (Apache Kafka
// 4.0.0), group-coordinator/.../GroupMetadataManager.java (GMM).

// reasonDowngrade is the rebalance a downgrade prepares.
const reasonDowngrade = "downgrade"

// ClassicGroupForUpgrade returns the group's current state as its record
// (every member's last synced assignment, the current generation) and
// whether the group is empty (state Empty: GMM.maybeDeleteEmptyClassicGroup
// deletes it, under any policy). ok is false when this broker owns no
// such group. It changes nothing.
func (b *Broker) ClassicGroupForUpgrade(groupID string) (rec GroupRecord, empty, ok bool) {
	p := b.parts[groupID]
	if p == nil || p.state != partOwned || p.group == nil || p.group.state == Dead {
		return GroupRecord{}, false, false
	}
	g := p.group
	return g.record(nil), g.state == Empty, true
}

// RemoveForUpgrade removes the group (GMM.convertToConsumerGroup, v8.0.0:
// completeAllJoinFutures and completeAllSyncFutures with
// REBALANCE_IN_PROGRESS, then the group tombstone): parked JoinGroups and
// SyncGroups are answered, every timer of the group is cancelled, and the
// group is gone from this coordinator (a later classic request finds no
// classic group). The group's state is traced as Dead.
func (b *Broker) RemoveForUpgrade(_ protocol.Instant, groupID string, out *Output) {
	p := b.parts[groupID]
	if p == nil || p.group == nil {
		return
	}
	g := p.group
	for _, m := range g.members {
		b.maybeInvokeJoinCallback(m, &protocol.JoinGroupResponse{
			Error: protocol.RebalanceInProgress, GenerationID: protocol.NoGeneration, MemberID: m.id}, out)
		b.maybeInvokeSyncCallback(m, &protocol.SyncGroupResponse{Error: protocol.RebalanceInProgress}, out)
	}
	// Answers held for the open batch (linger.go) go out now: the
	// partition stays with this coordinator, so its writes complete
	// (deviation: at the conversion, not at the batch's flush).
	b.cancel(&g.log.batch)
	b.onFlush(g, out)
	b.stopGroup(g, out)
	b.becomeDead(g, out)
	p.group = nil
}

// ImportDowngrade installs a classic group converted from a consumer group
// (GMM.convertToClassicGroup, v8.0.0): a Stable group at the record's
// generation whose members hold the assignments of the record; every
// member's heartbeat is rescheduled (rescheduleClassicGroupMemberHeartbeat)
// and, with rebalance (a downgrade after a member's removal), a rebalance
// is prepared, so every member rejoins. The group's record
// is persisted (createClassicGroupRecords). A no-op unless this broker owns
// the group's partition.
func (b *Broker) ImportDowngrade(now protocol.Instant, rec *GroupRecord, rebalance bool, out *Output) {
	p := b.parts[rec.GroupID]
	if p == nil || p.state != partOwned {
		return
	}
	g := groupFromRecord(rec.GroupID, p, rec)
	p.group = g
	g.state = Stable
	b.emitState(g, "", out)
	b.persist(g, g.record(nil), out)
	for _, m := range g.members {
		b.completeAndScheduleNextHeartbeatExpiration(now, g, m)
	}
	if rebalance {
		b.prepareRebalance(now, g, reasonDowngrade, out)
	}
}
