package harness

import (
	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/model/classic/coordinator"
	ccoord "github.com/rebalsim/rebalsim/model/consumer/coordinator"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// The online migration between classic and consumer groups
// (kafka-consumer-protocol.md §4) in the world. One group id is either a
// classic group, served by the broker's classic coordinator
// (coordinator.Broker), or a consumer group, served by its consumer-group
// coordinator (ccoord.Coordinator); the harness routes each request to the
// one that has the group and hands the group across:
//
//   - upgrade: a ConsumerGroupHeartbeat with epoch 0 for a group that is
//     classic at this broker. An empty classic group is deleted (any
//     policy); a non-empty one is validated (ccoord.ValidateUpgrade), taken
//     from the classic coordinator (RemoveForUpgrade: parked JoinGroup and
//     SyncGroup answered REBALANCE_IN_PROGRESS) and converted
//     (ccoord.Upgrade); then the heartbeat is served. A refused upgrade
//     answers GROUP_ID_NOT_FOUND (fatal for the Java consumer).
//   - classic members of a consumer group: JoinGroup, SyncGroup, Heartbeat
//     and LeaveGroup go to the consumer-group coordinator's classic
//     handlers (ccoord.ClassicJoin …), OffsetCommit to serveConsumerCommit
//     (serve). A JoinGroup to an empty
//     consumer group deletes it (any policy) and goes to the classic
//     coordinator.
//   - downgrade: when a removal leaves only classic members
//     (ccoord.Output.Downgrade), the classic coordinator gets the group
//     (ImportDowngrade), Stable with the target assignment, and prepares a
//     rebalance.
//
// Deviations: the conversion records are taken as written at once (no
// append latency), as for every consumer-group record; the classic
// group's persisted record is dropped at the upgrade (tombstone) and the
// downgraded group's record written at once.

// consumer reports whether the slot's next process runs the consumer
// protocol: its rolling restart's `set:`, else its cohort's config.
func (s *slot) consumer(g *scenario.Group) bool {
	if set := s.clientChange(); set != nil && set.GroupProtocol != "" {
		return set.GroupProtocol == scenario.ProtocolConsumer
	}
	return g.Consumer()
}

// remoteAssignor is the slot's group.remote.assignor.
func (s *slot) remoteAssignor(g *scenario.Group) string {
	if set := s.clientChange(); set != nil && set.RemoteAssignor != "" {
		return set.RemoteAssignor
	}
	return g.Client.RemoteAssignor
}

// servedAsConsumer reports whether broker b serves group g as a consumer
// group now (it is g's coordinator, loaded, and has the consumer group).
func (w *world) servedAsConsumer(now sim.Instant, b *broker, g *groupState) bool {
	return g.coord == int32(b.node) && now >= g.cs.loadedAt && b.cg.Group(g.id) != nil
}

// serveClassicInConsumerGroup answers a classic group request for a group
// that is a consumer group at b; false: the classic coordinator serves it.
func (w *world) serveClassicInConsumerGroup(now sim.Instant, b *broker, env *envelope) bool {
	var gid string
	switch r := env.req.(type) {
	case *protocol.JoinGroupRequest:
		gid = r.GroupID
	case *protocol.SyncGroupRequest:
		gid = r.GroupID
	case *protocol.HeartbeatRequest:
		gid = r.GroupID
	case *protocol.LeaveGroupRequest:
		gid = r.GroupID
	default: // OffsetCommit: serve sends a consumer group's to serveConsumerCommit first
		return false
	}
	g := w.groupByID(gid)
	if g == nil || g.cs == nil || g.cs.pure || !w.servedAsConsumer(now, b, g) {
		return false
	}
	cg := b.cg.Group(gid)
	var out ccoord.Output
	var resp protocol.Response
	switch r := env.req.(type) {
	case *protocol.JoinGroupRequest:
		if len(cg.Members()) == 0 {
			// An empty consumer group becomes a classic group, whatever
			// the policy (GMM.classicGroupJoin, v8.0.0).
			b.cg.DeleteEmpty(gid)
			w.groupType(g, b, protocol.ConversionClassicJoinToEmpty, "", cg.Epoch)
			return false
		}
		resp = b.cg.ClassicJoin(now, r, &out)
	case *protocol.SyncGroupRequest:
		resp = b.cg.ClassicSync(now, r, &out)
	case *protocol.HeartbeatRequest:
		resp = &protocol.HeartbeatResponse{Error: b.cg.ClassicHeartbeat(now, r, &out)}
	case *protocol.LeaveGroupRequest:
		resp = b.cg.ClassicLeave(now, r, &out)
	}
	w.bout.Replies = append(w.bout.Replies, coordinator.Reply{Conn: env.conn, Corr: env.corr, Resp: resp})
	w.flushConsumerCoord(b, &out)
	w.flushBroker(b)
	return true
}

// reasonGroupRecreated is the group-type event's conversion when an empty
// classic group is deleted and a new consumer group takes its id
// (GroupMetadataManager.getOrMaybeCreateConsumerGroup →
// maybeDeleteEmptyClassicGroup, v8.0.0): a new incarnation of the group,
// whose epochs start again from 1, and whose generations the checkers
// judge afresh.
const reasonGroupRecreated = protocol.ConversionGroupRecreated

// maybeUpgrade runs the upgrade path of a ConsumerGroupHeartbeat (see
// above) before the consumer-group coordinator serves it. It returns the
// error to answer instead, or protocol.None.
func (w *world) maybeUpgrade(now sim.Instant, b *broker, g *groupState, r *protocol.ConsumerGroupHeartbeatRequest) protocol.ErrorCode {
	if g.cs.pure || r.MemberEpoch != protocol.JoinEpoch || b.cg.Group(g.id) != nil {
		return protocol.None
	}
	rec, empty, ok := b.b.ClassicGroupForUpgrade(g.id)
	if !ok {
		return protocol.None
	}
	if empty {
		// GMM.maybeDeleteEmptyClassicGroup: any policy.
		b.b.RemoveForUpgrade(now, g.id, &w.bout)
		g.record = nil
		w.groupType(g, b, reasonGroupRecreated, "", rec.GenerationID)
		w.flushBroker(b)
		return protocol.None
	}
	cg := classicGroupOf(&rec)
	if code, why := b.cg.ValidateUpgrade(cg); code != protocol.None {
		w.groupType(g, b, protocol.ConversionRefused, why, rec.GenerationID)
		return code
	}
	b.b.RemoveForUpgrade(now, g.id, &w.bout)
	g.record = nil // the classic group's tombstone
	w.groupType(g, b, protocol.ConversionUpgrade, r.MemberID, rec.GenerationID)
	w.flushBroker(b)
	var out ccoord.Output
	b.cg.Upgrade(now, cg, &out)
	w.flushConsumerCoord(b, &out)
	return protocol.None
}

// handleDowngrade gives the classic coordinator the group a downgrade
// produced; the caller flushes w.bout.
func (w *world) handleDowngrade(b *broker, cg *ccoord.ClassicGroup) {
	g := w.groupByID(cg.ID)
	if g == nil {
		return
	}
	why := protocol.ConversionDowngrade
	if !cg.Rebalance {
		why = protocol.ConversionDowngradeStaticReplacement
	}
	w.groupType(g, b, why, "", cg.Generation)
	rec := recordOf(cg)
	b.b.ImportDowngrade(w.q.Now(), &rec, cg.Rebalance, &w.bout)
}

// groupType flips the group's type as the observers see it and traces it
// (State: the type it has now, "consumer" or "classic").
func (w *world) groupType(g *groupState, b *broker, why protocol.Conversion, detail string, gen int32) {
	to := "classic"
	if why.ToConsumer() {
		to = "consumer"
	}
	switch {
	case why == protocol.ConversionRefused:
	case to == "consumer":
		g.cs.active = true
	default:
		g.cs.active = false
		g.cs.group = nil
		g.cs.state = ""
	}
	w.tev = TraceEvent{At: w.q.Now(), Event: protocol.Event{Kind: tracing.EvGroupType, Node: b.name, Group: g.id, State: to, Reason: why.String(), Detail: detail, Gen: gen, Conversion: why}}
	w.emit(&w.tev)
}

// classicGroupOf converts a classic group record for the consumer-group
// coordinator.
func classicGroupOf(rec *coordinator.GroupRecord) *ccoord.ClassicGroup {
	cg := &ccoord.ClassicGroup{ID: rec.GroupID, Generation: rec.GenerationID, ProtocolType: rec.ProtocolType, ProtocolName: rec.ProtocolName}
	for _, m := range rec.Members {
		cg.Members = append(cg.Members, ccoord.ClassicMember{ID: m.MemberID, InstanceID: m.GroupInstanceID,
			SessionTimeout: m.SessionTimeout, RebalanceTimeout: m.RebalanceTimeout, Protocols: m.Protocols, Assignment: m.Assignment})
	}
	return cg
}

// recordOf converts a downgraded group for the classic coordinator.
func recordOf(cg *ccoord.ClassicGroup) coordinator.GroupRecord {
	rec := coordinator.GroupRecord{GroupID: cg.ID, GenerationID: cg.Generation, ProtocolType: cg.ProtocolType, ProtocolName: cg.ProtocolName}
	for _, m := range cg.Members {
		rec.Members = append(rec.Members, coordinator.MemberRecord{MemberID: m.ID,
			MemberConfig: &coordinator.MemberConfig{GroupInstanceID: m.InstanceID, SessionTimeout: m.SessionTimeout,
				RebalanceTimeout: m.RebalanceTimeout, Protocols: m.Protocols},
			Assignment: m.Assignment})
	}
	return rec
}
