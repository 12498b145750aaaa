package client

import "github.com/rebalsim/rebalsim/model/protocol"

// The heartbeat thread's grid of wake-ups (HeartbeatWakeCadence).
// AbstractCoordinator.HeartbeatThread.run @3.9.0-rc3 (the same loop from
// 0.10.1) waits AbstractCoordinator.this.wait(rebalanceConfig.retryBackoffMs)
// in every iteration that has nothing to do, and after it sends a heartbeat
// (heartbeat.sentHeartbeat(now); sendHeartbeatRequest()) goes round again at
// once into such a wait. So each wait starts when the previous iteration
// ended: the grid restarts at every heartbeat sent, and every wait is
// retry.backoff.ms plus however late Object.wait returns. A heartbeat due
// heartbeat.interval.ms after the last is then sent ceil(interval / (backoff
// + overshoot)) steps after it: 3000 ms + 30 × overshoot for 3 s and 100 ms.
// The default overshoot (scenario.DefaultWaitOvershoot, 0.47 ms) is read off
// the real client's own cadence on this testbed
// (results/calibration/real/*/kafka-*/rep-*/summary.json,
// real.heartbeat_gap_ms: 3011–3019 ms at load average ≤ 2.5, so about 14 ms a
// heartbeat; 3038–3055 ms at load 16–29, so the overshoot grows with load).
// harness/testdata/WaitOvershoot.java's 0.115 ms is Object.wait(100) alone;
// the rest of the loop (pollNoWakeup, re-taking the monitor) is in the real
// client's figure (docs/PROFILES.md, "Heartbeat thread"). The real clients'
// heartbeats drift, so a crashed
// member's session expiry, a whole number of heartbeat intervals after its
// last heartbeat, comes at a phase of the survivors' heartbeats that drifts
// too. The grid restarts where the thread is enabled too
// (HeartbeatThread.enable @3.9.0-rc3 notifies it). Deviation: in Kafka the
// notified thread's grid starts only where it gets through
// client.pollNoWakeup(), whose ConsumerNetworkClient lock the application
// thread holds while it blocks in its network poll: at the SyncGroup
// response or the end of that poll's timer. Measured on the testbed, real
// first heartbeats lie a median 17 ms later than a grid anchored at enable
// predicts (docs/CALIBRATE.md, "Do real heartbeats stay phase-aligned?").
// Deviation: the other
// notify() wake-ups (pollHeartbeat when a heartbeat is due, a failed
// heartbeat's listener) are not modelled, nor the wait to re-take the
// coordinator's monitor after enable's notify while the application thread
// still holds it.

// gridStep is one wait of the heartbeat thread: retry.backoff.ms plus the
// wait's overshoot.
func (t *heartbeatThread) gridStep() protocol.Instant {
	return protocol.Instant(t.m.cfg.RetryBackoff + t.m.cfg.Sim.WaitOvershoot)
}

// restartGrid: the thread goes into a fresh wait at now (after a heartbeat
// sent), so its next wake-ups are now + k·gridStep.
func (t *heartbeatThread) restartGrid(now protocol.Instant) {
	if t.m.cfg.Sim.HeartbeatWakeCadence {
		t.wakeBase = now
	}
}
