package coordinator

import (
	"github.com/rebalsim/rebalsim/model/protocol"
)

// The Java group coordinator's append linger (4.x profiles).
//
// The Java coordinator runs on CoordinatorRuntime, which does not append
// each write on its own: a write opens a batch of its __consumer_offsets
// partition (maybeAllocateNewBatch) and the writes made meanwhile join it;
// the batch is flushed group.coordinator.append.linger.ms after it opened
// (the linger TimerTask; CoordinatorRuntime v8.0.0, v8.1.0), or, with the
// adaptive linger of 4.2+ (-1, the default from v8.2.0, KAFKA-19826), by a
// flush event queued behind the events already waiting. A write's response
// waits for its records to be committed, and an operation that writes
// nothing (Heartbeat, a failed OffsetCommit) waits for the open batch if
// there is one ("it was a read operation after all … the read needs to
// wait on the last write operation", CoordinatorRuntime.append v8.0.0
// 935-947). apache/kafka PR #18274 (4.0: the default 10 → 5 ms) measured the
// cost: "offset commit total time increases by +10ms, which is very high
// compared to single digit offset commit total times in the old
// coordinator".
//
// Modelled: the group-record append of SyncGroup (its members' answers),
// of a static restart and of an Empty group starts at the flush
// (storeGroup); a successful OffsetCommit opens or joins the batch and is
// answered at the flush; Heartbeat, LeaveGroup and a failed OffsetCommit
// are answered at the flush when a batch is open, at once otherwise.
// JoinGroup is not delayed: GroupCoordinatorService.joinGroup (v8.0.0
// 382-427) answers from the response future that completeClassicGroupJoin
// completes directly, not from the write's completion (so is SyncGroup in
// Stable). Deviations: the adaptive linger is 0 here (the model has no
// coordinator event queue; coordinator.request.time queues in the
// harness); a batch is never flushed early for being full
// (max.message.bytes); an OffsetCommit's own append (replication) is not
// modelled in any era, so it is answered at the flush; a no-record
// response does not wait for a flushed batch still replicating; a new
// group's first JoinGroup writes no record here (Java appends an empty
// group record, which opens a batch); consumer groups (KIP-848,
// model/consumer/coordinator) have no linger.

// lingers reports whether this broker batches writes with a linger.
func (b *Broker) lingers() bool {
	return b.feat.javaClassic && b.cfg.AppendLinger > 0
}

// batchFlush returns when a write made now is flushed: now without a
// linger; else the open batch's flush, opening a batch (flushed one linger
// from now) when none is open.
func (b *Broker) batchFlush(now protocol.Instant, g *group) protocol.Instant {
	if !b.lingers() {
		return now
	}
	if !g.log.batch.armed() {
		b.schedule(&g.log.batch, now.Add(b.cfg.AppendLinger))
	}
	return g.log.batch.at
}

// replyAfterWrite answers a request whose operation wrote records (writes)
// or wrote none: with a linger, at the flush of the batch it opened or
// joined, or, when it wrote nothing, of the open batch; else at once.
func (b *Broker) replyAfterWrite(now protocol.Instant, g *group, writes bool, out *Output, conn Conn, corr uint64, resp protocol.Response) {
	if g != nil && b.lingers() && (writes || g.log.batch.armed()) {
		b.batchFlush(now, g)
		g.log.held = append(g.log.held, Reply{Conn: conn, Corr: corr, Resp: resp})
		return
	}
	b.reply(out, conn, corr, resp)
}

// onFlush flushes the group's batch: the held responses go out, in the
// order their requests came. (The batch's group-record appends were armed
// by storeGroup to start at the flush.)
func (b *Broker) onFlush(g *group, out *Output) {
	out.Replies = append(out.Replies, g.log.held...)
	clear(g.log.held)
	g.log.held = g.log.held[:0]
}

// dropBatch closes the group's batch when the group leaves this
// coordinator: the held responses fail with NOT_COORDINATOR (the runtime
// fails the pending events when the partition is unloaded).
func (b *Broker) dropBatch(g *group, out *Output) {
	b.cancel(&g.log.batch)
	for _, r := range g.log.held {
		b.reply(out, r.Conn, r.Corr, notCoordinatorLike(r.Resp))
	}
	clear(g.log.held)
	g.log.held = g.log.held[:0]
}

// notCoordinatorLike is a NOT_COORDINATOR response of resp's type.
func notCoordinatorLike(resp protocol.Response) protocol.Response {
	switch resp.(type) {
	case *protocol.HeartbeatResponse:
		return &protocol.HeartbeatResponse{Error: protocol.NotCoordinator}
	case *protocol.LeaveGroupResponse:
		return &protocol.LeaveGroupResponse{Error: protocol.NotCoordinator}
	case *protocol.OffsetCommitResponse:
		return &protocol.OffsetCommitResponse{Error: protocol.NotCoordinator}
	}
	panic("coordinator: notCoordinatorLike: unexpected held response")
}

// ownedGroup is the group this broker coordinates under id (nil when it
// does not own it or there is no group).
func (b *Broker) ownedGroup(id string) *group {
	p := b.lastPart
	if p == nil || p.groupID != id {
		p = b.parts[id]
	}
	if p == nil || p.state != partOwned {
		return nil
	}
	return p.group
}
