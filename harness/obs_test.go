// Tests of what a run lets one see (docs/OBSERVABILITY.md): every fault
// kind has its effect in the trace, each metric equals a value computed by
// hand from the trace's own instants, each invariant checker catches a
// violation forged through a test hook, a run with every fault kind (swarm
// and filter included) is a pure function of its seed, and the observations
// (settle episodes, fences, the measurement window) are what the summary
// counts. The readers of a finished trace (explain, Perfetto) are tested in
// harness/tracing.
package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// TestMetricsCrashByHand: unowned partition-seconds after a crash = the
// startup part (4 partitions unowned from the first start until the first
// assignment, then 2 until the second) + the crashed member's 2 partitions
// from the crash until the survivor's eager revocation, then all 4 until the
// survivor's new assignment. Member-hours are the processes' lifetimes.
func TestMetricsCrashByHand(t *testing.T) {
	sc := simtest.ParseSmall(t, "40s", 1, "  - {at: 20s, crash: g-1}\n")
	res := run(t, sc, 3, Options{KeepTrace: true})
	tr := res.Trace
	as0 := simtest.Find(tr, simtest.KindOf(protocol.EvAssigned, "g-0"))
	as1 := simtest.Find(tr, simtest.KindOf(protocol.EvAssigned, "g-1"))
	rv0 := simtest.Find(tr, simtest.KindOf(protocol.EvRevoked, "g-0"))
	require.Len(t, as0, 2, "g-0: assigned at generation 1, then all 4 partitions")
	require.Len(t, as1, 1)
	require.Len(t, rv0, 1, "eager: g-0 revokes before rejoining")
	require.Len(t, as0[0].Partitions, 2)
	require.Len(t, as1[0].Partitions, 2)
	require.Len(t, as0[1].Partitions, 4)
	first, second := as0[0].At, as1[0].At
	if second < first {
		first, second = second, first
	}
	crash := sim.Instant(20 * time.Second)
	want := 4*simtest.Secs(first) + 2*simtest.Secs(second-first) + // startup
		2*simtest.Secs(rv0[0].At-crash) + // the crashed member's partitions
		4*simtest.Secs(as0[1].At-rv0[0].At) // everything, from the revocation to the new assignment
	gs := res.Summary.Groups[0]
	assert.InDelta(t, want, gs.UnownedPartitionSeconds, 0.002)
	assert.Zero(t, gs.DoubleOwnedPartitionSeconds)
	// g-0 lives 0..40 s, g-1 0.1..20 s.
	assert.InDelta(t, (40+19.9)/3600, gs.MemberHours, 1e-6)
	assert.Equal(t, 1, gs.Evictions)
	assert.Equal(t, 0, gs.FalseEvictions, "the evicted process was dead")
	assert.Equal(t, 0, gs.CoordinatorDeadMarks)
	require.Equal(t, 2, gs.RebalanceCount)
	r := gs.Rebalances[1]
	removed := simtest.Find(tr, simtest.KindOf(protocol.EvMemberRemoved, ""))
	require.Len(t, removed, 1)
	assert.Equal(t, int64(removed[0].At)/1e6, r.StartMs, "the rebalance starts at the eviction")
	assert.Equal(t, int64(as0[1].At)/1e6, r.EndMs, "and ends when the survivor holds its assignment")
	assert.Equal(t, "session-expired", r.Trigger)
	assert.Equal(t, 1, r.Members)
}

// TestMetricsPauseByHand: a pause longer than the session timeout makes a
// zombie: the coordinator evicts the live member (a false eviction), the
// other member takes its partitions while the zombie still holds them
// (double-owned from that assignment until the zombie gives them up as lost
// on resume), and the zombie's session timer marks a live coordinator dead
// (a false dead mark). Rates are per member-hour.
func TestMetricsPauseByHand(t *testing.T) {
	sc := simtest.ParseSmall(t, "60s", 1, "  - {at: 20s, pause: g-1, for: 15s}\n")
	res := run(t, sc, 3, Options{KeepTrace: true})
	tr := res.Trace
	gs := res.Summary.Groups[0]
	assert.Equal(t, 1, gs.Evictions)
	assert.Equal(t, 1, gs.FalseEvictions)
	dead := simtest.Find(tr, simtest.KindOf(protocol.EvCoordinatorDead, "g-1"))
	require.NotEmpty(t, dead)
	assert.Equal(t, len(simtest.Find(tr, simtest.KindOf(protocol.EvCoordinatorDead, ""))), gs.CoordinatorDeadMarks)
	assert.Equal(t, gs.CoordinatorDeadMarks, gs.FalseCoordinatorDeadMarks, "one broker, never moved: every mark is false")

	// Double ownership: from g-0's assignment of all 4 partitions (holding
	// g-1's 2) to g-1's revocation (lost) of them.
	as0 := simtest.Find(tr, simtest.KindOf(protocol.EvAssigned, "g-0"))
	lost := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvRevoked && e.Node == "g-1" })
	require.GreaterOrEqual(t, len(as0), 2)
	require.NotEmpty(t, lost)
	var takeover sim.Instant
	for _, a := range as0 {
		if len(a.Partitions) == 4 {
			takeover = a.At
			break
		}
	}
	require.Positive(t, takeover)
	require.Greater(t, lost[0].At, takeover, "the zombie gives them up after g-0 took them")
	assert.InDelta(t, 2*simtest.Secs(lost[0].At-takeover), gs.DoubleOwnedPartitionSeconds, 0.002)

	gs.FillRates()
	assert.InDelta(t, float64(gs.FalseEvictions)/gs.MemberHours, gs.FalseEvictionsPerMemberHour, 1e-3)
	assert.InDelta(t, float64(gs.FalseCoordinatorDeadMarks)/gs.MemberHours, gs.FalseCoordinatorDeadMarksPerMemberHour, 1e-3)
	assert.InDelta(t, float64(gs.Evictions)/gs.MemberHours, gs.EvictionsPerMemberHour, 1e-3)
	b, err := json.Marshal(res.Summary)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"false_evictions_per_member_hour":`)
	assert.Contains(t, string(b), `"false_coordinator_dead_marks_per_member_hour":`)
}

// TestMetricsFailoverTrueDeadMarks: after a coordinator failover the members
// learn NOT_COORDINATOR and mark the old coordinator dead: true marks.
func TestMetricsFailoverTrueDeadMarks(t *testing.T) {
	sc := simtest.ParseSmall(t, "40s", 3, "  - {at: 20s, coordinator-failover: g}\n")
	res := run(t, sc, 3, Options{KeepTrace: true})
	gs := res.Summary.Groups[0]
	marks := simtest.Find(res.Trace, simtest.KindOf(protocol.EvCoordinatorDead, ""))
	require.NotEmpty(t, marks)
	assert.Equal(t, len(marks), gs.CoordinatorDeadMarks)
	assert.Equal(t, 0, gs.FalseCoordinatorDeadMarks, "the coordinator had moved")
	assert.Equal(t, 0, gs.Evictions)
	assert.True(t, gs.StableAtEnd)
}

// TestEveryFaultKind: each fault of INTERFACE.md (and the extensions) leaves
// its mark in the trace.
func TestEveryFaultKind(t *testing.T) {
	cases := []struct {
		name, faults string
		check        func(t *testing.T, tr []TraceEvent, gs GroupSummary)
	}{
		{"crash", "  - {at: 20s, crash: g-1}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			assert.NotEmpty(t, simtest.Find(tr, func(e *TraceEvent) bool {
				return e.Kind == tracing.EvProcess && e.Node == "g-1" && e.State == "crashed"
			}))
			assert.Equal(t, 1, gs.Evictions)
		}},
		{"restart", "  - {at: 20s, crash: g-1}\n  - {at: 22s, restart: g-1}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			st := simtest.Find(tr, func(e *TraceEvent) bool {
				return e.Kind == tracing.EvProcess && e.Node == "g-1" && e.State == "started"
			})
			require.Len(t, st, 2)
			assert.Equal(t, sim.Instant(22*time.Second), st[1].At)
			assert.True(t, gs.StableAtEnd)
		}},
		{"pause", "  - {at: 20s, pause: g-1, for: 5s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			p := simtest.Find(tr, func(e *TraceEvent) bool {
				return e.Kind == tracing.EvProcess && e.Node == "g-1" && e.State != "started"
			})
			require.Len(t, p, 2)
			assert.Equal(t, "paused", p[0].State)
			assert.Equal(t, "resumed", p[1].State)
			assert.Equal(t, sim.Instant(25*time.Second), p[1].At)
			assert.Zero(t, gs.Evictions, "5 s < session timeout")
		}},
		{"slow-poll", "  - {at: 20s, slow-poll: g-1, for: 400s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			assert.NotEmpty(t, simtest.Find(tr, simtest.KindOf(protocol.EvPollTimeout, "g-1")), "max.poll.interval.ms (300 s) passes")
		}},
		{"partition", "  - {at: 20s, partition: [g-1, coordinator], for: 15s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			drops := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvLost && e.Reason == "partition" })
			require.NotEmpty(t, drops, "transmissions lost to the partition (TCP retransmits them)")
			for _, d := range drops {
				assert.True(t, d.Node == "g-1" || d.Peer == "g-1")
			}
			assert.Equal(t, 1, gs.FalseEvictions)
		}},
		{"partition one-way", "  - {at: 20s, partition: [coordinator, g-1], for: 15s, direction: one-way}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			drops := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvLost && e.Reason == "partition" })
			require.NotEmpty(t, drops)
			for _, d := range drops {
				assert.Equal(t, "broker-0", d.Node, "only coordinator → g-1 is cut")
				assert.Equal(t, "g-1", d.Peer)
			}
			// Requests from g-1 still arrive in the window.
			assert.NotEmpty(t, simtest.Find(tr, func(e *TraceEvent) bool {
				return e.Kind == tracing.EvDeliver && e.Req && e.Peer == "g-1" && e.At > sim.Instant(21*time.Second) && e.At < sim.Instant(35*time.Second)
			}))
			f := simtest.Find(tr, simtest.KindOf(tracing.EvFault, "harness"))
			require.Len(t, f, 1)
			assert.Equal(t, "coordinator>g-1", f[0].Detail, "the fault as written; > marks one way")
		}},
		{"loss", "  - {at: 20s, loss: 1, for: 5s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			drops := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvLost && e.Reason == "loss" })
			require.NotEmpty(t, drops)
			for _, d := range drops {
				assert.True(t, d.At >= sim.Instant(20*time.Second) && d.At < sim.Instant(25*time.Second))
			}
			assert.Empty(t, simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvDrop }), "TCP drops no message")
		}},
		{"latency", "  - {at: 20s, latency: 200ms, for: 5s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			sends := map[string]sim.Instant{}
			slow := 0
			for _, e := range tr {
				k := e.Node + e.Peer + fmt.Sprint(e.Corr, e.Req)
				if e.Kind == tracing.EvSend {
					sends[k] = e.At
				}
				if e.Kind == tracing.EvDeliver {
					k = e.Peer + e.Node + fmt.Sprint(e.Corr, e.Req)
					if e.At-sends[k] >= sim.Instant(200*time.Millisecond) {
						slow++
						assert.True(t, sends[k] >= sim.Instant(20*time.Second) && sends[k] < sim.Instant(25*time.Second))
					}
				}
			}
			assert.Positive(t, slow)
		}},
		{"coordinator-failover", "  - {at: 20s, coordinator-failover: g}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			m := simtest.Find(tr, simtest.KindOf(tracing.EvBrokerRole, ""))
			require.Len(t, m, 1)
			assert.NotEqual(t, m[0].Node, m[0].Peer)
		}},
		{"leave", "  - {at: 20s, leave: g-1}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			assert.NotEmpty(t, simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvMemberRemoved && e.Reason == "leave" }))
			assert.Zero(t, gs.Evictions)
		}},
		{"join", "  - {at: 20s, join: g}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			assert.NotEmpty(t, simtest.Find(tr, func(e *TraceEvent) bool {
				return e.Kind == tracing.EvProcess && e.Node == "g-2" && e.State == "started"
			}))
			assert.Equal(t, 3, gs.Rebalances[len(gs.Rebalances)-1].Members)
		}},
		{"rolling-restart", "  - {at: 20s, rolling-restart: g, interval: 5s, downtime: 1s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			for _, n := range []string{"g-0", "g-1"} {
				assert.Len(t, simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvProcess && e.Node == n && e.State == "closed" }), 1)
				assert.Len(t, simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvProcess && e.Node == n && e.State == "started" }), 2)
			}
		}},
		// Every request of g-1 (not only heartbeats: an OffsetCommit or a
		// JoinGroup also refreshes the session at the coordinator, as in
		// GroupCoordinator.handleCommitOffsets).
		{"filter drop", "  - {at: 20s, filter: {member: g-1, direction: request, action: drop}, for: 15s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			drops := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvDrop && e.Reason == "filter" })
			require.NotEmpty(t, drops)
			for _, d := range drops {
				assert.Equal(t, "g-1", d.Node)
				assert.True(t, d.Req)
			}
			assert.Equal(t, 1, gs.FalseEvictions, "15 s without a heartbeat arriving > session timeout")
			ends := simtest.Find(tr, simtest.KindOf(tracing.EvFaultEnd, "harness"))
			require.Len(t, ends, 1)
			assert.Equal(t, sim.Instant(35*time.Second), ends[0].At)
		}},
		{"filter api", "  - {at: 20s, filter: {api: Heartbeat, member: g-1, direction: request, action: drop}, for: 15s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			drops := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvDrop && e.Reason == "filter" })
			require.NotEmpty(t, drops)
			for _, d := range drops {
				assert.Equal(t, "g-1", d.Node)
				assert.Equal(t, protocol.APIHeartbeat, d.API)
				assert.True(t, d.Req)
			}
			assert.Positive(t, gs.CoordinatorDeadMarks, "g-1's heartbeats get no answer")
		}},
		{"filter delay", "  - {at: 20s, filter: {api: Heartbeat, direction: response, action: delay, delay: 700ms}, for: 5s}\n", func(t *testing.T, tr []TraceEvent, gs GroupSummary) {
			sends := map[string]sim.Instant{}
			delayed := 0
			for _, e := range tr {
				if e.Kind == tracing.EvSend && !e.Req {
					sends[e.Peer+fmt.Sprint(e.Corr)] = e.At
				}
				if e.Kind == tracing.EvDeliver && !e.Req {
					d := e.At - sends[e.Node+fmt.Sprint(e.Corr)]
					if d >= sim.Instant(700*time.Millisecond) {
						delayed++
						assert.Equal(t, protocol.APIHeartbeat, e.API)
					}
				}
			}
			assert.Positive(t, delayed)
			assert.Empty(t, simtest.Find(tr, simtest.KindOf(tracing.EvDrop, "")))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			brokers := 1
			if c.name == "coordinator-failover" {
				brokers = 2
			}
			sc := simtest.ParseSmall(t, "500s", brokers, c.faults)
			res := run(t, sc, 3, Options{KeepTrace: true})
			c.check(t, res.Trace, res.Summary.Groups[0])
			assert.Empty(t, res.Summary.InvariantViolations)
		})
	}
}

// TestOverlappingWindows: two overlapping loss windows: the network returns
// to the first window's loss when the second ends, and to the scenario's
// when the first ends (not when the first of them ends).
func TestOverlappingWindows(t *testing.T) {
	sc := simtest.ParseSmall(t, "40s", 1, "  - {at: 10s, loss: 1, for: 10s}\n  - {at: 12s, loss: 1, for: 2s}\n  - {at: 15s, partition: [g-1, coordinator], for: 10s}\n  - {at: 16s, partition: [g-1, coordinator], for: 2s}\n")
	res := run(t, sc, 3, Options{KeepTrace: true})
	late := simtest.Find(res.Trace, func(e *TraceEvent) bool {
		return e.Kind == tracing.EvLost && e.At > sim.Instant(14*time.Second) && e.At < sim.Instant(20*time.Second)
	})
	assert.NotEmpty(t, late, "the first window still loses everything after the second ended")
	cut := simtest.Find(res.Trace, func(e *TraceEvent) bool {
		return e.Kind == tracing.EvLost && e.Node == "g-1" && e.At > sim.Instant(20*time.Second) && e.At < sim.Instant(25*time.Second)
	})
	assert.NotEmpty(t, cut, "the first partition still holds after the second healed")
}

// forge runs the world to at, emits the forged event through the same path
// model events take (the checkers' input), and runs to the end.
func forge(t *testing.T, sc *scenario.Scenario, at time.Duration, mk func(w *world) TraceEvent) []Violation {
	t.Helper()
	w, err := newWorld(sc, 3, Options{})
	require.NoError(t, err)
	w.q.Run(sim.Budget{Until: sim.Instant(at), MaxEvents: 1 << 30}, w.fire)
	e := mk(w)
	w.emit(&e)
	w.run()
	return w.viol
}

// TestCheckersCatchForgedViolations: each invariant checker reports a
// violation injected through a test hook (the forged event of forge, or a
// member's assignment corrupted), with the violating event attached.
func TestCheckersCatchForgedViolations(t *testing.T) {
	cases := []struct {
		checker string
		mk      func(w *world) TraceEvent
	}{
		// Another member claims g-0's partition in the same generation.
		{"single-owner-per-generation", func(w *world) TraceEvent {
			return TraceEvent{At: w.q.Now(), Event: protocol.Event{Kind: protocol.EvAssigned, Node: "g-1", Group: "g",
				Gen: w.groups[0].m.coordGen, Partitions: w.slots[0].owned[:1]}, Slot: 2}
		}},
		// The coordinator completes a generation below the current one.
		{"monotonic-generations", func(w *world) TraceEvent {
			return TraceEvent{At: w.q.Now(), Event: protocol.Event{Kind: protocol.EvGenerationComplete, Node: "broker-0", Group: "g",
				Gen: w.groups[0].m.coordGen - 1}}
		}},
		// A live member's view is corrupted: it reports UNJOINED while the
		// model stays STABLE, so it never completes a join again and the
		// group never settles.
		{"liveness", func(w *world) TraceEvent {
			return TraceEvent{At: w.q.Now(), Event: typedText(protocol.Event{Kind: protocol.EvMemberState, Node: "g-1", Group: "g", State: "UNJOINED", Detail: "STABLE"}), Slot: 2}
		}},
	}
	for _, c := range cases {
		t.Run(c.checker, func(t *testing.T) {
			sc := simtest.ParseSmall(t, "400s", 1, "")
			viol := forge(t, sc, 20*time.Second, c.mk)
			require.NotEmpty(t, viol)
			assert.Equal(t, c.checker, viol[0].Checker)
			if c.checker != "liveness" {
				assert.Equal(t, int64(20000), viol[0].AtMs)
				assert.True(t, json.Valid([]byte(viol[0].Event)), viol[0].Event)
				assert.Contains(t, viol[0].Event, `"t_ms":20000`)
			}
		})
	}
	// And without the forgery, nothing is reported.
	w, err := newWorld(simtest.ParseSmall(t, "400s", 1, ""), 3, Options{})
	require.NoError(t, err)
	w.run()
	assert.Empty(t, w.viol)
}

// TestSameSeedSameTraceEveryFault: with every fault kind active, the same
// seed gives the same trace, byte for byte, and another seed another one.
func TestSameSeedSameTraceEveryFault(t *testing.T) {
	sc := simtest.ParseSmall(t, "400s", 3, simtest.AllFaults)
	var a, b, c bytes.Buffer
	ra := run(t, sc, 11, Options{TraceJSONL: &a, KeepTrace: true})
	run(t, sc, 11, Options{TraceJSONL: &b})
	run(t, sc, 12, Options{TraceJSONL: &c})
	require.Equal(t, a.String(), b.String())
	assert.NotEqual(t, a.String(), c.String())
	kinds := map[string]bool{}
	swarm := 0
	for _, e := range ra.Trace {
		if e.Kind == tracing.EvFault {
			kinds[e.Reason] = true
		}
	}
	for _, f := range SwarmFaults(sc, 11) {
		swarm++
		assert.True(t, f.Swarm)
	}
	assert.Positive(t, swarm, "the swarm drew faults")
	for _, k := range []scenario.FaultKind{scenario.FaultCrash, scenario.FaultRestart, scenario.FaultPause, scenario.FaultSlowPoll,
		scenario.FaultPartition, scenario.FaultLoss, scenario.FaultLatency, scenario.FaultCoordinatorFailover,
		scenario.FaultLeave, scenario.FaultJoin, scenario.FaultRollingRestart, scenario.FaultFilter} {
		assert.True(t, kinds[string(k)], "fault %s ran", k)
	}
	faults := simtest.Find(ra.Trace, simtest.KindOf(tracing.EvFault, "harness"))
	assert.Equal(t, 14+swarm, len(faults), "every file and swarm fault is a fault event in the trace")
	// The scenario is not modified by running it (faults are resolved on a copy).
	assert.Equal(t, [2]string{"g-1", "coordinator"}, sc.Faults[4].Peers)
}

// TestSwarmSchedule: the swarm's schedule is a function of the seed; each
// kind has its own stream, so changing one rate leaves the others alone;
// draws stay in the window.
func TestSwarmSchedule(t *testing.T) {
	sc := simtest.ParseSmall(t, "400s", 3, "  []\nswarm: {from: 10s, until: 300s, crash: 2, crash.downtime: 1s, pause: 3, pause.for: 1s}\n")
	a, b := SwarmFaults(sc, 5), SwarmFaults(sc, 5)
	require.Equal(t, a, b)
	assert.NotEqual(t, a, SwarmFaults(sc, 6))
	pauses := func(fs []scenario.Fault) []scenario.Fault {
		var out []scenario.Fault
		for _, f := range fs {
			if f.Kind == scenario.FaultPause {
				out = append(out, f)
			}
		}
		return out
	}
	crashes := 0
	for _, f := range a {
		assert.GreaterOrEqual(t, f.At, 10*time.Second)
		if f.Kind == scenario.FaultCrash {
			crashes++
			assert.Less(t, f.At, 300*time.Second)
		}
	}
	// Poisson with mean 2/min over 290 s = 9.7: far from 0 and from 40.
	assert.Greater(t, crashes, 1)
	assert.Less(t, crashes, 40)
	sc.Swarm.Crash = 0.5
	assert.Equal(t, pauses(a), pauses(SwarmFaults(sc, 5)), "pauses do not depend on the crash rate")
}

// A model's failed self-check (assert-failed) is a violation named
// model-assertion, with the member and the check.
func TestModelAssertionIsAViolation(t *testing.T) {
	var c checker = modelAssertChecker{}
	require.Equal(t, "model-assertion", c.name())
	e := &TraceEvent{Event: protocol.Event{Kind: protocol.EvAssertFailed, Node: "g-1", Detail: "join: becomeStable from UNJOINED"}}
	require.Equal(t, "g-1: join: becomeStable from UNJOINED", c.check(nil, e))
	require.Empty(t, c.check(nil, &TraceEvent{Event: protocol.Event{Kind: protocol.EvFatal}}))
}

// TestMeasureWindow: measure: {from: 30s} leaves the startup join out of
// the settle episodes, the unowned partition-seconds and the member-hours,
// and keeps the crash's episode (without the window, startup dominates
// unowned_partition_seconds and hides the effect studied).
func TestMeasureWindow(t *testing.T) {
	faults := "  - {at: 40s, crash: g-1}\n"
	whole := simtest.ParseSmall(t, "90s", 1, faults)
	windowed := simtest.ParseSmall(t, "90s", 1, faults)
	windowed.MeasureFrom = 30 * time.Second
	a := run(t, whole, 3, Options{}).Summary.Groups[0]
	b := run(t, windowed, 3, Options{}).Summary.Groups[0]
	require.Len(t, a.Rebalances, 2, "startup and crash")
	require.Len(t, b.Rebalances, 1, "only the crash")
	assert.Equal(t, a.Rebalances[1], b.Rebalances[0])
	assert.Equal(t, a.Evictions, b.Evictions)
	assert.Less(t, b.UnownedPartitionSeconds, a.UnownedPartitionSeconds)
	assert.Equal(t, a.UnownedPartitionSecondsAfterFirstFault, b.UnownedPartitionSecondsAfterFirstFault)
	assert.InDelta(t, (10.0+60.0)/3600, b.MemberHours, 1e-5, "g-0 60 s, g-1 10 s inside the window")
	assert.Equal(t, int64(40000), b.FirstFaultMs)
}

// TestInvalidSessionTimeout: a configuration the broker rejects must not
// look best: session.timeout.ms below group.min.session.timeout.ms
// kills every member with INVALID_SESSION_TIMEOUT; the run is invalid and
// says why.
func TestInvalidSessionTimeout(t *testing.T) {
	sc := simtest.ParseSmall(t, "30s", 1, "")
	for i := range sc.Groups {
		sc.Groups[i].Client.SessionTimeout = 5 * time.Second
	}
	sc.Coordinator.MinSessionTimeout = 6 * time.Second
	s := run(t, sc, 3, Options{}).Summary
	assert.False(t, s.Valid)
	assert.Contains(t, s.InvalidReason, "INVALID_SESSION_TIMEOUT")
	ok := run(t, simtest.ParseSmall(t, "30s", 1, ""), 3, Options{}).Summary
	assert.True(t, ok.Valid)
	assert.Empty(t, ok.InvalidReason)
}

// TestFirstFaultSwarm: a swarm's first fault is the run's first fault
// (fault-relative figures count from it; they read only faults[0] before).
func TestFirstFaultSwarm(t *testing.T) {
	text := fmt.Sprintf(simtest.Small, "120s", 1, "  []\n") + "swarm: {pause: 2, pause.for: 1s}\n"
	sc, err := scenario.Parse("obs.yaml", []byte(text))
	require.NoError(t, err)
	res := run(t, sc, 3, Options{})
	first := int64(-1)
	for _, o := range res.Observations {
		if o.Kind == tracing.ObsFault {
			first = int64(o.At) / 1e6
			break
		}
	}
	require.GreaterOrEqual(t, first, int64(0), "the swarm drew a fault")
	assert.Equal(t, first, res.Summary.Groups[0].FirstFaultMs)
	none := run(t, simtest.ParseSmall(t, "30s", 1, ""), 3, Options{}).Summary.Groups[0]
	assert.Equal(t, int64(-1), none.FirstFaultMs)
}

// TestSeedsVaryLeavePhase: seeds must vary something:
// graceful-leave gave a 113 ms leave rebalance on every seed because every
// start and fault was exact. With realistic timing (the default) the seed
// draws the phase of the leave relative to the heartbeats, so the leave's
// settle episode varies over seeds by up to about one heartbeat interval;
// timing: exact still gives one value.
func TestSeedsVaryLeavePhase(t *testing.T) {
	leaveEpisode := func(sc *scenario.Scenario, seed uint64) int64 {
		for _, r := range run(t, sc, seed, Options{}).Summary.Groups[0].Rebalances {
			if r.Trigger == "leave" {
				return r.DurationMs
			}
		}
		t.Fatalf("seed %d: no leave episode", seed)
		return 0
	}
	realistic := load(t, "graceful-leave")
	require.Equal(t, scenario.TimingRealistic, realistic.Timing)
	exact := load(t, "graceful-leave")
	exact.SetTiming(scenario.TimingExact)
	got, gotExact := map[int64]bool{}, map[int64]bool{}
	var lo, hi int64 = 1 << 62, 0
	for seed := uint64(1); seed <= 12; seed++ {
		d := leaveEpisode(realistic, seed)
		got[d] = true
		lo, hi = min(lo, d), max(hi, d)
		gotExact[leaveEpisode(exact, seed)] = true
	}
	assert.Len(t, gotExact, 1, "exact timing: the same phase on every seed")
	assert.Greater(t, len(got), 6, "realistic timing: the phase differs from seed to seed")
	hb := realistic.Groups[0].Client.HeartbeatInterval.Milliseconds()
	assert.Greater(t, hi-lo, hb/3, "the spread is a good part of a heartbeat interval")
	assert.Less(t, hi, 2*hb+1000, "a leave costs up to about one heartbeat interval")
}

// TestSettleEpisodeSpansGenerations: "rebalances 2" beside "final
// generation 36" must not read as a contradiction: a settle episode records the generations it spans, the
// summary counts generation bumps and the members' completed rebalances,
// and the three agree with the observations. Here g-1's poll takes longer
// than max.poll.interval.ms: it leaves, the group rebalances, and g-1 rejoins
// within the same episode (two generations).
func TestSettleEpisodeSpansGenerations(t *testing.T) {
	sc := simtest.Parse(t, simtest.SlowPoll)
	res := run(t, sc, 1, Options{})
	g := res.Summary.Groups[0]
	require.Len(t, g.Rebalances, 2)
	last := g.Rebalances[1]
	assert.Equal(t, "poll-timeout", last.Trigger)
	assert.GreaterOrEqual(t, last.Generations, 2, "one episode, several generations")
	assert.Equal(t, last.Generation-last.FirstGeneration+1, int32(last.Generations))
	assert.Equal(t, g.SettleEpisodes, g.RebalanceCount)
	spanned := 0
	for _, r := range g.Rebalances {
		spanned += r.Generations
	}
	c := tracing.CountObservations(res.Observations, "g")
	assert.Equal(t, c.Generations, g.Generations)
	assert.Equal(t, spanned, g.Generations, "every generation fell inside an episode")
	assert.Greater(t, g.Generations, g.SettleEpisodes)
	assert.GreaterOrEqual(t, g.ClientRebalances, 2*g.SettleEpisodes, "each member completes at least one rebalance per episode")
	assert.Equal(t, int32(g.Generations), g.FinalGeneration)
}

// TestFaultsOnOneTargetKeepOrder: realistic timing moves faults on one
// target together, so a restart 500 ms after a crash stays 500 ms after it
// whatever phase the seed draws (a heartbeat interval is 3 s).
func TestFaultsOnOneTargetKeepOrder(t *testing.T) {
	src := fmt.Sprintf(simtest.Small, "40s", 1, "  - {at: 20s, crash: g-1}\n  - {at: 20500ms, restart: g-1}\n")
	src = strings.Replace(src, "seed: 3\n", "seed: 3\ntiming: realistic\n", 1)
	sc, err := scenario.Parse("obs.yaml", []byte(src))
	require.NoError(t, err)
	for seed := uint64(1); seed <= 10; seed++ {
		var crash, restart sim.Instant = -1, -1
		for _, o := range run(t, sc, seed, Options{}).Observations {
			if o.Kind == tracing.ObsFault && o.Fault == "crash" {
				crash = o.At
			}
			if o.Kind == tracing.ObsFault && o.Fault == "restart" {
				restart = o.At
			}
		}
		require.GreaterOrEqual(t, crash, sim.Instant(20*time.Second), "seed %d", seed)
		assert.Equal(t, sim.Instant(500*time.Millisecond), restart-crash, "seed %d", seed)
	}
}

// TestFencesAreNotEvictions is the rolling-restart-static case
// ("evictions 0" beside eight "EVICTION … removed (fenced)" lines): a static
// member replaced by its new process is a fence of the old process, which
// the JoinGroup response that gave out the old member id identifies (not a
// name in a text field).
func TestFencesAreNotEvictions(t *testing.T) {
	sc := load(t, "rolling-restart-static")
	res := run(t, sc, 1, Options{})
	g := res.Summary.Groups[0]
	c := tracing.CountObservations(res.Observations, g.ID)
	require.Positive(t, c.Fences)
	assert.Equal(t, c.Fences, g.Fences)
	assert.Zero(t, g.Evictions)
	assert.Zero(t, c.Evictions)
	for _, o := range res.Observations {
		if o.Kind != tracing.ObsFence {
			continue
		}
		assert.NotEmpty(t, o.Member, "fence of %s maps to a member", o.MemberID)
		assert.True(t, strings.HasPrefix(o.MemberID, o.Member+"-"), "member id %s was given to %s", o.MemberID, o.Member)
		assert.Positive(t, o.Process, "the fenced process is known")
	}
}
