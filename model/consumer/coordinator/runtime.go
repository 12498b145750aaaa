package coordinator

import (
	"slices"
	"time"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// Costs are the group coordinator runtime's costs for consumer-protocol
// heartbeats (CoordinatorRuntime): how long the shard's event loop is busy
// with a heartbeat and how long a heartbeat's records take to be committed.
// All zero by default: the coordinator answers at once, as before.
//
// What Kafka does (4.x, read at v8.0.0 and seen in the 4.4.0 testbed's
// broker logs):
//
//   - A ConsumerGroupHeartbeat is a write event of the group's
//     __consumer_offsets partition (GroupCoordinatorService
//     .consumerGroupHeartbeat → CoordinatorRuntime.scheduleWriteOperation):
//     the shard's events run one at a time on the coordinator event
//     processor, so a heartbeat that arrives while an earlier event of the
//     shard runs waits behind it. The target assignment is computed inside
//     the heartbeat (GroupMetadataManager.consumerGroupHeartbeat →
//     updateTargetAssignment → TargetAssignmentBuilder.build, the assignor
//     run synchronously; at 4.4.0 the "Computed a new target assignment …
//     in Nms" and the member's "new assignment state" lines come from the
//     same group-coordinator-event-processor thread, 9 ms apart in
//     cal-consumer-crash rep 1), so the loop is busy for the assignor's run.
//
//   - The heartbeat's records are appended to the open batch and its
//     response is a deferred event completed when the high watermark passes
//     the batch (CoordinatorRuntime.CoordinatorContext.append →
//     deferredEventQueue, completed in onHighWatermarkUpdated). A heartbeat
//     that writes nothing is "a read operation after all": answered at once
//     iff no write is pending, else it waits for the last written offset
//     (the same method). So answers leave in log order: none before an
//     earlier write of the shard is committed.
//
//   - KIP-1263's assignor offload (group.consumer.assignor.offload.enable:
//     the assignor on a group.coordinator.background.threads thread, its
//     result applied by a later event) is in the ConfigDef of apache/kafka
//     trunk (GroupCoordinatorConfig, default true); at 4.3 it is not
//     defined and the consumer-group path never consults it
//     (kafka-consumer-protocol.md §1.1), and at 4.4.0 the testbed's first
//     answer carries the target computed in the same handling (epoch 2,
//     client "with epoch 2 transitioned from JOINING to RECONCILING"): the
//     model runs the assignor inline, as 4.0–4.4 do.
//
//   - The batch waits group.coordinator.append.linger.ms before it is
//     written (5 ms in 4.0–4.1; -1, adaptive, from 4.2, KAFKA-19826): not
//     added here; with the adaptive linger the batch is written when the
//     loop has no other event, which the append latency includes.
//
// What the model lacked before these costs: every answer at the
// heartbeat's arrival, so a fresh coordinator's first heartbeat (0.24–1.5
// s of handling and 0.19–2.1 s to commit at 4.4.0 on the testbed) and the
// answers queued behind it were instant, which moved the members'
// heartbeat grids (calibrate: initial_join_ms of the KIP-848 scenarios).
//
// The model charges a heartbeat's event-loop cost from the later of its
// arrival and the end of the previous heartbeat's cost (the shard's queue),
// and releases its answer (Output.ReplyAt) at the end of that cost, or, for
// a heartbeat that wrote records, when they are committed (that end plus
// the append latency), and never before the last write's commit.
// Deviations: the group's state changes at the heartbeat's arrival, not
// after the queue (the queue orders answers only; session deadlines count
// from the arrival); the append linger (group.coordinator.append.linger.ms)
// is not added here (it is adaptive, run as 0, from 4.2); an error answer
// (an exception of the write operation) waits for the queue only; the
// classic members of a migrated group (migration.go) and the timers'
// writes (Tick) are not charged.
type Costs struct {
	// AssignTime is the event loop's time for each target computation
	// (the assignor's run, "… assignor in Nms").
	AssignTime time.Duration
	// FirstTargetTime replaces AssignTime for the coordinator's first
	// target computation, the whole heartbeat's handling on a fresh broker
	// (the group's creation, its epoch bump and the assignor's first run
	// on a cold JVM: "joins the consumer group" → the member's "new
	// assignment state", 0.2–0.8 s at 4.4.0 on the testbed). 0: AssignTime.
	FirstTargetTime time.Duration
	// AppendLatency is a heartbeat's records' append → commit (the high
	// watermark passes them).
	AppendLatency time.Duration
	// FirstAppendLatency replaces AppendLatency for the coordinator's first
	// write (the fresh broker's first group records; 2.1 s at 4.4.0 in
	// cal-consumer-crash rep 1). 0: AppendLatency.
	FirstAppendLatency time.Duration
}

// runtime is the coordinator's event-loop and log state (Costs).
type runtime struct {
	busyUntil   protocol.Instant // the shard's event loop is busy until then
	committed   protocol.Instant // the last write's commit
	targetOnce  bool             // the first target was computed
	appended    bool             // the first write was made
	cost        time.Duration    // this call's event-loop cost
	wrote       bool             // this call wrote records
	chargeCosts bool             // inside Heartbeat: charge the target computation
}

// chargeTarget charges a target computation to the heartbeat under way.
func (c *Coordinator) chargeTarget() {
	if !c.rt.chargeCosts {
		return
	}
	d := c.cfg.Costs.AssignTime
	if !c.rt.targetOnce && c.cfg.Costs.FirstTargetTime > 0 {
		d = c.cfg.Costs.FirstTargetTime
	}
	c.rt.targetOnce = true
	c.rt.cost += d
}

// wrote notes that the heartbeat under way writes records.
func (c *Coordinator) wrote() { c.rt.wrote = true }

// release sets the heartbeat's answer instant (Costs): after the shard's
// queue and its cost, and after its records' commit or the last pending
// one's.
func (c *Coordinator) release(now protocol.Instant, out *Output) {
	start := max(now, c.rt.busyUntil)
	end := start.Add(c.rt.cost)
	c.rt.busyUntil = max(c.rt.busyUntil, end)
	at := end
	if out.Resp != nil && out.Resp.Error == protocol.None {
		if c.rt.wrote {
			lat := c.cfg.Costs.AppendLatency
			if !c.rt.appended && c.cfg.Costs.FirstAppendLatency > 0 {
				lat = c.cfg.Costs.FirstAppendLatency
			}
			c.rt.appended = true
			c.rt.committed = max(c.rt.committed, end.Add(lat))
		}
		at = max(at, c.rt.committed)
	}
	out.ReplyAt = at
	c.rt.cost, c.rt.wrote, c.rt.chargeCosts = 0, false, false
}

// equalAssignment reports whether two member assignments are the same (a
// changed one is a new ConsumerGroupCurrentMemberAssignment record).
func equalAssignment(a, b assignment) bool {
	return a.state == b.state && a.epoch == b.epoch && a.prevEpoch == b.prevEpoch &&
		slices.Equal(a.assigned, b.assigned) && slices.Equal(a.revoking, b.revoking)
}
