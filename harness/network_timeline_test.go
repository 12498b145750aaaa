package harness

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// End-to-end timelines of network faults over TCP, with exact times
// (network-model.md §6.3 and §7). Latency is a constant 1 ms, so every
// connection's RTO is SRTT + 200 ms = 202 ms and a segment lost at t is
// retransmitted at t + 202 ms · (2^k − 1): 0.202, 0.606, 1.414, 3.03,
// 6.262, 12.726, 25.654 s.

func netTimeline(t *testing.T, brokers, session int, fault string) []TraceEvent {
	t.Helper()
	return run(t, simtest.Parse(t, fmt.Sprintf(simtest.NetTimelineTmpl, brokers, session, fault)), 1, Options{KeepTrace: true}).Trace
}

// A 20 s two-way partition between g-1 and the coordinator with session
// 45 s (3.x defaults): no Kafka timer fires (the first stuck heartbeat
// would time out only 30 s after it was sent). TCP retransmits the
// heartbeat sent into the partition; the retransmission 25.654 s after it
// is the first after the heal, so it arrives then (+1 ms) with the
// heartbeats queued behind it, and the broker keeps the member: no
// eviction, no coordinator-dead mark (network-model.md §6.3, T = 20 s).
func TestNetTimelinePartition20sSession45s(t *testing.T) {
	tr := netTimeline(t, 1, 45000, "{at: 60s, partition: [g-1, coordinator], for: 20s}")
	first, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return tlMsg(tracing.EvSend, "g-1", protocol.APIHeartbeat, true)(e) && e.At >= sim.Instant(60*time.Second)
	})
	require.True(t, ok)
	lost, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvLost && e.Node == "g-1" && e.Corr == first.Corr })
	require.True(t, ok)
	assert.Equal(t, first.At, lost.At)
	assert.Equal(t, "partition", lost.Reason)
	retx, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return e.Kind == tracing.EvRetransmit && e.Node == "g-1" && e.Corr == first.Corr
	})
	require.True(t, ok)
	assert.Equal(t, first.At+sim.Instant(25654*time.Millisecond), retx.At, "the 7th transmission, the first after the heal")
	arrive, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return tlMsg(tracing.EvDeliver, "broker-0", protocol.APIHeartbeat, true)(e) && e.Peer == "g-1" && e.Corr == first.Corr
	})
	require.True(t, ok)
	assert.Equal(t, retx.At+sim.Instant(time.Millisecond), arrive.At)
	behind := simtest.Find(tr, func(e *TraceEvent) bool {
		return tlMsg(tracing.EvDeliver, "broker-0", protocol.APIHeartbeat, true)(e) && e.Peer == "g-1" && e.Corr > first.Corr && e.At <= arrive.At
	})
	// Every heartbeat sent 3, 6, … 24 s after it waited behind it: those
	// sent after the heal too, the sender still being in loss recovery.
	assert.Len(t, behind, 8, "the heartbeats queued behind it arrive in the same burst")
	assert.Empty(t, simtest.Find(tr, simtest.KindOf(protocol.EvMemberRemoved, "")))
	assert.Empty(t, simtest.Find(tr, simtest.KindOf(protocol.EvCoordinatorDead, "g-1")))
	assert.Empty(t, simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvDrop }), "TCP loses no message")
}

// The same partition with session 10 s: the coordinator removes g-1
// exactly one session after the last heartbeat (or commit) it processed; g-1's own
// session timer marks the coordinator dead one session after its last
// heartbeat response ("session timed out without receiving a heartbeat
// response") and closes the coordinator connection; after the heal it
// rediscovers the coordinator, learns it was removed and rejoins.
func TestNetTimelinePartition20sSession10s(t *testing.T) {
	tr := netTimeline(t, 1, 10000, "{at: 60s, partition: [g-1, coordinator], for: 20s}")
	var lastIn, lastResp TraceEvent
	for _, e := range tr {
		// Heartbeats and offset commits both re-arm the member's session
		// (completeAndScheduleNextHeartbeatExpiration).
		if e.At < sim.Instant(60*time.Second) && e.Kind == tracing.EvDeliver && e.Req && e.Node == "broker-0" && e.Peer == "g-1" &&
			(e.API == protocol.APIHeartbeat || e.API == protocol.APIOffsetCommit) {
			lastIn = e
		}
		if e.At < sim.Instant(60*time.Second) && tlMsg(tracing.EvDeliver, "g-1", protocol.APIHeartbeat, false)(&e) {
			lastResp = e
		}
	}
	require.NotZero(t, lastIn.At)
	_, ids := tlIDs(tr)
	rm, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvMemberRemoved && e.Peer == ids["g-1"][0] })
	require.True(t, ok)
	assert.Equal(t, "session-expired", rm.Reason)
	assert.Equal(t, lastIn.At+sim.Instant(10*time.Second), rm.At)
	dead, ok := tlFirst(tr, simtest.KindOf(protocol.EvCoordinatorDead, "g-1"))
	require.True(t, ok)
	assert.Equal(t, "session-timeout", dead.Reason)
	// The heartbeat thread sees its session timer expired at its first
	// wake-up at or after the deadline: it waits retry.backoff.ms (100 ms)
	// between passes (AbstractCoordinator.HeartbeatThread.run @3.7.0,
	// "AbstractCoordinator.this.wait(rebalanceConfig.retryBackoffMs)").
	assert.GreaterOrEqual(t, dead.At, lastResp.At+sim.Instant(10*time.Second))
	assert.Less(t, dead.At, lastResp.At+sim.Instant(10*time.Second+100*time.Millisecond))
	closed, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return e.Kind == protocol.EvDisconnected && e.Node == "g-1" && e.At >= dead.At
	})
	require.True(t, ok)
	assert.Equal(t, dead.At, closed.At, "disconnectAsync: the coordinator connection is closed")
	rejoin, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return e.Kind == protocol.EvJoined && e.Node == "g-1" && e.At > sim.Instant(80*time.Second)
	})
	require.True(t, ok, "g-1 rejoins after the heal")
	assert.Less(t, rejoin.At, sim.Instant(80*time.Second+30*time.Second))
	assert.Len(t, ids["g-1"], 2, "under a new member id")
}

// The controller moves a crashed broker's groups after the session timeout
// of the cluster's metadata mode (coordinator.failover.delay's default):
// ZooKeeper's zookeeper.session.timeout.ms, 6 s up to 2.4 and 18 s from 2.5
// (KIP-537; KafkaConfig.scala Defaults.ZkSessionTimeoutMs @2.4.0, @2.5.0),
// KRaft's broker.session.timeout.ms, 9 s (@3.3.0). ZooKeeper is assumed up
// to 3.2, KRaft from 3.3; metadata.mode chooses for 2.8–3.9.
func TestNetTimelineFailoverDelayPerEra(t *testing.T) {
	at := sim.Instant(60 * time.Second)
	for _, tc := range []struct {
		coord string
		delay time.Duration
	}{
		{"profile: kafka-2.4", 6 * time.Second},
		{"profile: kafka-2.8", 18 * time.Second},
		{"profile: kafka-3.2", 18 * time.Second},
		{"profile: kafka-3.6", 9 * time.Second},
		{"profile: kafka-3.6, metadata.mode: zookeeper", 18 * time.Second},
		{"profile: kafka-4.0", 9 * time.Second},
	} {
		t.Run(tc.coord, func(t *testing.T) {
			src := strings.Replace(fmt.Sprintf(simtest.NetTimelineTmpl, 3, 45000, "{at: 60s, crash: coordinator, for: 30s}"),
				"profile: kafka-3.x, group.initial", tc.coord+", group.initial", 1)
			tr := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true}).Trace
			moved, ok := tlFirst(tr, simtest.KindOf(tracing.EvBrokerRole, ""))
			require.True(t, ok)
			assert.Equal(t, at+sim.Instant(tc.delay), moved.At, "fenced after the metadata session timeout")
		})
	}
}

// Coordinator broker process crash versus host loss (network-model.md §7).
// A crash: the broker's kernel closes its connections, so every member sees
// its coordinator connection close 1 ms later (read at its next network
// poll: the heartbeat thread's next wake-up) and marks the coordinator
// dead at its next request at the latest; the controller moves the group
// after failover.delay (9 s). A silent host: nothing is noticed until the
// first heartbeat sent into the silence times out, 30 s (request.timeout.ms)
// after it was sent.
func TestNetTimelineBrokerCrashVersusHostDown(t *testing.T) {
	at := sim.Instant(60 * time.Second)
	tr := netTimeline(t, 3, 45000, "{at: 60s, crash: coordinator, for: 30s}")
	moved, ok := tlFirst(tr, simtest.KindOf(tracing.EvBrokerRole, ""))
	require.True(t, ok)
	assert.Equal(t, at+sim.Instant(9*time.Second), moved.At, "fenced after failover.delay")
	for i := 0; i < 3; i++ {
		m := fmt.Sprintf("g-%d", i)
		closed, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvDisconnected && e.Node == m && e.At >= at })
		require.True(t, ok, m)
		// The FIN arrives after one latency; the member reads it at its
		// heartbeat thread's next wake-up, retry.backoff.ms plus overshoot
		// at most, unless the application thread polls first
		// (AbstractCoordinator.HeartbeatThread.run @3.9.0-rc3).
		fin := at + sim.Instant(time.Millisecond)
		assert.GreaterOrEqual(t, closed.At, fin, "%s: not before the FIN arrives", m)
		assert.Less(t, closed.At, fin+sim.Instant(100*time.Millisecond+time.Millisecond), "%s: read at the next wake-up", m)
		assert.Equal(t, "peer-closed", closed.Reason)
		dead, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvCoordinatorDead && e.Node == m && e.At >= at })
		require.True(t, ok, m)
		assert.LessOrEqual(t, dead.At, at+sim.Instant(3*time.Second+10*time.Millisecond), "%s: at its next heartbeat at the latest", m)
	}
	assert.Empty(t, simtest.Find(tr, simtest.KindOf(protocol.EvMemberRemoved, "")), "the new coordinator re-arms every session at load")

	tr = netTimeline(t, 3, 45000, "{at: 60s, host-down: coordinator, for: 30s}")
	assert.Empty(t, simtest.Find(tr, func(e *TraceEvent) bool {
		return e.Kind == protocol.EvDisconnected && e.At >= at && e.At < at+sim.Instant(29*time.Second)
	}),
		"a silent host is not noticed for a request timeout")
	for i := 0; i < 3; i++ {
		m := fmt.Sprintf("g-%d", i)
		hb, ok := tlFirst(tr, func(e *TraceEvent) bool {
			return tlMsg(tracing.EvSend, m, protocol.APIHeartbeat, true)(e) && e.At >= at
		})
		require.True(t, ok, m)
		dead, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvCoordinatorDead && e.Node == m && e.At >= at })
		require.True(t, ok, m)
		assert.Equal(t, "request-timeout", dead.Reason, m)
		assert.Equal(t, hb.At+sim.Instant(30*time.Second), dead.At, "%s: the first heartbeat into the silence times out", m)
	}
	assert.Empty(t, simtest.Find(tr, simtest.KindOf(protocol.EvMemberRemoved, "")))
}

// A member's host goes silent for 60 s (no FIN: the broker learns nothing)
// and reboots: the coordinator evicts it one session after its last
// heartbeat or commit (a true eviction: the process is gone), the new
// process joins under a new member id and the group ends Stable with every
// member in it.
func TestNetTimelineMemberHostDown(t *testing.T) {
	sc := simtest.Parse(t, fmt.Sprintf(simtest.NetTimelineTmpl, 1, 10000, "{at: 60s, host-down: g-1, for: 60s}"))
	res := run(t, sc, 1, Options{KeepTrace: true})
	tr := res.Trace
	p := simtest.Find(tr, simtest.KindOf(tracing.EvProcess, "g-1"))
	require.Len(t, p, 3)
	assert.Equal(t, "host-down", p[1].State)
	assert.Equal(t, "started", p[2].State)
	assert.Equal(t, sim.Instant(120*time.Second), p[2].At)
	assert.Empty(t, simtest.Find(tr, func(e *TraceEvent) bool {
		return e.Kind == protocol.EvDisconnected && e.At >= sim.Instant(60*time.Second) && e.At < sim.Instant(120*time.Second)
	}), "a silent host closes nothing")
	gs := res.Summary.Groups[0]
	assert.Equal(t, 1, gs.Evictions)
	assert.Zero(t, gs.FalseEvictions)
	assert.True(t, gs.StableAtEnd)
	_, ids := tlIDs(tr)
	assert.Len(t, ids["g-1"], 2)
}

// The client's connection settings in the scenario reach the model:
// reconnect.backoff.ms 2000 gives a 1.6–2.4 s backoff after the first
// disconnect (± 20 % jitter), where the default gives 40–60 ms.
func TestClientConnectionSettingsReachTheClient(t *testing.T) {
	src := fmt.Sprintf(simtest.NetTimelineTmpl, 3, 45000, "{at: 60s, crash: coordinator, for: 30s}")
	src = strings.Replace(src, "session.timeout.ms: 45000}", "session.timeout.ms: 45000, reconnect.backoff.ms: 2000, reconnect.backoff.max.ms: 8000}", 1)
	tr := run(t, simtest.Parse(t, src), 1, Options{KeepTrace: true}).Trace
	d, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return e.Kind == protocol.EvDisconnected && e.At >= sim.Instant(60*time.Second)
	})
	require.True(t, ok)
	assert.GreaterOrEqual(t, d.Count, int32(1600))
	assert.LessOrEqual(t, d.Count, int32(2400))
}

// A single-broker cluster: the coordinator's broker crashes and restarts.
// No other broker can take the group, so the restarted broker loads it
// again (it used to answer NOT_COORDINATOR for ever); member ids a
// restarted broker hands out never repeat its previous incarnation's (a
// group reloaded from a record with those ids panicked the coordinator:
// found by simrun explore).
func TestNetTimelineSingleBrokerRestart(t *testing.T) {
	res := run(t, simtest.Parse(t, fmt.Sprintf(simtest.NetTimelineTmpl, 1, 10000, "{at: 60s, crash: coordinator, for: 20s}")), 1, Options{KeepTrace: true})
	gs := res.Summary.Groups[0]
	assert.True(t, gs.StableAtEnd)
	moved, ok := tlFirst(res.Trace, simtest.KindOf(tracing.EvBrokerRole, ""))
	require.True(t, ok)
	assert.Equal(t, sim.Instant(80*time.Second), moved.At, "elected again at its restart")
	assert.Equal(t, "broker-0", moved.Node)
}

// The finding of `simrun explore bug-kafka-13214 --swarm default` seed
// 100172, shrunk: three coordinator crashes, a pause, a host-down. A
// restarted broker handed out a member id its previous incarnation had
// already given, and the group reloaded from the record already held it:
// the coordinator panicked ("add: member already present").
func TestBrokerRestartMemberIDsNeverRepeat(t *testing.T) {
	src, err := os.ReadFile("testdata/explore-member-id-after-broker-restart.yaml")
	require.NoError(t, err)
	sc, err := scenario.Parse("explore-member-id-after-broker-restart.yaml", src)
	require.NoError(t, err)
	res, err := Run(sc, 100172, Options{})
	require.NoError(t, err)
	assert.Empty(t, res.Summary.InvariantViolations)
}

// A broker crash on a broker whose host is already down changes nothing:
// the broker comes back when the host-down ends, reachable. Before, the
// crash's end restarted the broker's process on a host the network still
// held down, and the host-down's end found the broker up and did nothing:
// the broker was up for the harness (and was elected coordinator again)
// but silent for ever. broker-1 host-down for 60 s, crashed 5 s later
// for 20 s.
func TestNetTimelineBrokerCrashDuringHostDown(t *testing.T) {
	tr := netTimeline(t, 3, 10000, `{at: 40s, host-down: broker-1, for: 60s}
  - {at: 45s, crash: broker-1, for: 20s}`)
	var started []sim.Instant
	for _, e := range simtest.Find(tr, simtest.KindOf(tracing.EvBrokerProcess, "broker-1")) {
		if e.State == "started" {
			started = append(started, e.At)
		}
	}
	assert.Equal(t, []sim.Instant{sim.Instant(100 * time.Second)}, started,
		"broker-1 starts once, when its host is back (the crash on a down host changes nothing)")
}

// The finding of `simrun explore bug-kafka-13214 --swarm default
// --file-faults=false --set duration=600s --oracle group-stuck` seeds
// 110578 and 506080, shrunk: a coordinator host-down, a crash of the same
// (still down) broker, then two more coordinator host-downs. The crash's
// end brought the broker up for the harness while its host stayed down in
// the network; the group moved to it and every member looped on
// FindCoordinator and coordinator connections that never completed, the
// group Empty until the end of the run.
func TestBrokerCrashDuringHostDownGroupRecovers(t *testing.T) {
	src, err := os.ReadFile("testdata/explore-crash-during-host-down.yaml")
	require.NoError(t, err)
	sc, err := scenario.Parse("explore-crash-during-host-down.yaml", src)
	require.NoError(t, err)
	res, err := Run(sc, 110578, Options{})
	require.NoError(t, err)
	assert.Empty(t, res.Summary.InvariantViolations)
	assert.True(t, res.Summary.Groups[0].StableAtEnd)
}

// The finding of `simrun explore coordinator-failover --swarm default
// --set duration=600s --seeds 2000` seed 39 (cpu-spin), shrunk: the
// coordinator's broker crashes for 37 s. Every lookup found it while the
// coordinator connection was in reconnect backoff (each reconnect was
// refused), and the application thread looked up again at once instead of
// sleeping retry.backoff.ms (AbstractCoordinator.ensureCoordinatorReady):
// payments-0 sent 4490 FindCoordinator requests, one per round trip, until
// the group moved. Now it sleeps: at most one lookup per retry.backoff.ms
// (100 ms) per thread.
func TestLookupBacksOffWhileCoordinatorInReconnectBackoff(t *testing.T) {
	src, err := os.ReadFile("testdata/explore-lookup-spin-in-reconnect-backoff.yaml")
	require.NoError(t, err)
	sc, err := scenario.Parse("explore-lookup-spin-in-reconnect-backoff.yaml", src)
	require.NoError(t, err)
	res, err := Run(sc, 39, Options{KeepTrace: true})
	require.NoError(t, err)
	lookups := simtest.Find(res.Trace, func(e *TraceEvent) bool {
		return tlMsg(tracing.EvSend, "payments-0", protocol.APIFindCoordinator, true)(e)
	})
	assert.LessOrEqual(t, len(lookups), 300, "lookups paced by retry.backoff.ms, not one per round trip (4490 before)")
}
