// End-to-end timelines of docs/kafka-classic-protocol.md §17.5 ("Typical
// timelines with defaults") and §17.6 ("Emergent behaviours a faithful
// simulator should reproduce"). Each test names its section and the Kafka
// behaviour, runs a small inline scenario with jittered latency over several
// seeds, and asserts concrete timings read off the trace (exact where the
// protocol fixes them: timers fire at deadline instants of virtual time).
// Timelines that read best as a scenario and its expected trace live as
// scripts in testdata/timelines (timeline_scripts_test.go), their golden
// output printing the exact instants. Those left here assert relations a
// golden trace would only imply: an algorithm's model checked over
// staggered starts (tlInitialJoinCompletes), a rule over every round of a
// repeated pattern (FollowerSyncTimeoutSlowLeader), or a configuration
// changed mid-run (tlRunSwitching).
package harness

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/classic/client"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// tlSeeds: every timeline must hold whatever the seed's latency jitter and
// same-instant tie-breaks.
var tlSeeds = []uint64{1, 2, 3, 4, 5}

func tlAt(e TraceEvent) time.Duration { return time.Duration(e.At) }

func tlDur(a sim.Instant) time.Duration { return time.Duration(a) }

// tlFirst is the first event matching pred (ok false if none).
func tlFirst(tr []TraceEvent, pred func(e *TraceEvent) bool) (TraceEvent, bool) {
	for i := range tr {
		if pred(&tr[i]) {
			return tr[i], true
		}
	}
	return TraceEvent{}, false
}

// tlMsg matches a message event of kind (EvSend or EvDeliver) of api in the
// given direction (req: request, else response) on node (the sender for
// EvSend, the receiver for EvDeliver).
func tlMsg(kind protocol.EventKind, node string, api protocol.APIKey, req bool) func(e *TraceEvent) bool {
	return func(e *TraceEvent) bool {
		return e.Kind == kind && e.API == api && e.Req == req && e.Node == node
	}
}

// tlBrokerGot matches a request of api from member delivered to a broker.
func tlBrokerGot(member string, api protocol.APIKey) func(e *TraceEvent) bool {
	return func(e *TraceEvent) bool {
		return e.Kind == tracing.EvDeliver && e.Req && e.API == api && e.Peer == member && strings.HasPrefix(e.Node, "broker-")
	}
}

// tlLeaderAt is the member that last learned it leads (EvJoined "leader")
// before at.
func tlLeaderAt(tr []TraceEvent, at sim.Instant) string {
	leader := ""
	for i := range tr {
		if tr[i].At >= at {
			break
		}
		if tr[i].Kind == protocol.EvJoined && tr[i].Detail == "leader" {
			leader = tr[i].Node
		}
	}
	return leader
}

// tlIDs maps each member id the coordinator added to the process (member
// name) that joined with it, and lists each process's ids in order.
func tlIDs(tr []TraceEvent) (owner map[string]string, ids map[string][]string) {
	owner, ids = map[string]string{}, map[string][]string{}
	for _, e := range tr {
		if e.Kind == protocol.EvMemberAdded {
			owner[e.Peer] = e.Detail
			ids[e.Detail] = append(ids[e.Detail], e.Peer)
		}
	}
	return owner, ids
}

// tlInitialJoinCompletes is the Scala InitialDelayedJoin of §12.5: the first
// member added to an Empty group at generation 0 starts a delay of
// group.initial.rebalance.delay.ms with remaining = max(rebalanceTimeout −
// delay, 0); when a delay fires and a member was added during it
// (newMemberAdded) and remaining ≠ 0, a new delay of min(configured,
// remaining) starts with remaining' = max(remaining − the delay that just
// elapsed, 0); otherwise the join completes. first is the first member-added
// instant, later the later ones.
func tlInitialJoinCompletes(first time.Duration, later []time.Duration, configured, rebalanceTimeout time.Duration) time.Duration {
	delay := configured
	remaining := max(rebalanceTimeout-configured, 0)
	start := first
	for {
		fire := start + delay
		added := false
		for _, a := range later {
			if a >= start && a < fire {
				added = true
			}
		}
		if !added || remaining == 0 {
			return fire
		}
		next := min(configured, remaining)
		remaining = max(remaining-delay, 0)
		delay = next
		start = fire
	}
}

// tlRunSwitching runs sc for seed, but at virtual time `at` changes the
// group's client configuration with change: every process started from then
// on (staggered starts, join and restart faults) uses the changed one. The
// scenario file has one client configuration per group; this is how a test
// gives members of one group different settings (e.g. mixed
// max.poll.interval.ms, §17.6).
func tlRunSwitching(t *testing.T, sc *scenario.Scenario, seed uint64, at time.Duration, change func(*client.Config)) *Result {
	t.Helper()
	w, err := newWorld(sc, seed, Options{KeepTrace: true})
	require.NoError(t, err)
	w.q.Run(sim.Budget{Until: sim.Instant(at), MaxEvents: 2_000_000_000}, w.fire)
	change(w.groups[0].cohorts[0].cfg)
	w.groups[0].cohorts[0].tmpl = nil // processes started from now on get the changed configuration
	stop := w.run()
	return &Result{Summary: w.summary(), Stop: stop, Trace: w.rec.events}
}

// TestTimelineNewGroupStartedTogether — §17.5 "New group of N consumers
// started together" (with §11 KIP-394, §12.5 InitialDelayedJoin, §12.6, §8.1):
// each member's first JoinGroup is answered MEMBER_ID_REQUIRED and it
// re-sends at once; the first real join moves the group Empty →
// PreparingRebalance; the others arrive inside the first 3 s window, so the
// initial delay is extended once and generation 1 completes exactly
// 2 × group.initial.rebalance.delay.ms after the first member was added;
// CompletingRebalance → the leader's SyncGroup appends the group record →
// Stable; each member's first heartbeat goes out exactly one
// heartbeat.interval.ms after its JoinGroup response.
func TestTimelineNewGroupStartedTogether(t *testing.T) {
	const members = 4
	sc := simtest.Parse(t, `
name: new-group-together
duration: 12s
coordinator: {brokers: 1, profile: kafka-3.x, group.initial.rebalance.delay.ms: 3000}
network: {latency: {dist: uniform, min: 1ms, max: 5ms}}
topics: [{name: t, partitions: 8}]
groups:
  - id: g
    members: 4
    subscribe: [t]
    client: {profile: kafka-3.x, heartbeat.interval.ms: 3000}
    start: {at: 0s, stagger: 0s}
`)
	delay := sc.Coordinator.InitialRebalanceDelay
	hbInterval := sc.Groups[0].Client.HeartbeatInterval
	for _, seed := range tlSeeds {
		tr := run(t, sc, seed, Options{KeepTrace: true}).Trace
		var added []time.Duration
		for i := 0; i < members; i++ {
			m := fmt.Sprintf("g-%d", i)
			// KIP-394: the first JoinGroup (empty id) is answered MEMBER_ID_REQUIRED ...
			resp, ok := tlFirst(tr, tlMsg(tracing.EvDeliver, m, protocol.APIJoinGroup, false))
			require.True(t, ok, "seed %d %s: a JoinGroup response", seed, m)
			assert.Equal(t, protocol.MemberIDRequired, resp.Err, "seed %d %s: first JoinGroup answered MEMBER_ID_REQUIRED", seed, m)
			// ... and the member re-sends it at once, with the id.
			sends := simtest.Find(tr, tlMsg(tracing.EvSend, m, protocol.APIJoinGroup, true))
			require.Len(t, sends, 2, "seed %d %s: exactly two JoinGroups (KIP-394 round trip)", seed, m)
			assert.Equal(t, resp.At, sends[1].At, "seed %d %s: the second JoinGroup is sent the instant MEMBER_ID_REQUIRED arrives", seed, m)
			second, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlBrokerGot(m, protocol.APIJoinGroup)(e) && e.Corr == sends[1].Corr
			})
			require.True(t, ok)
			add, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvMemberAdded && e.Detail == m })
			require.True(t, ok, "seed %d %s: added", seed, m)
			assert.Equal(t, second.At, add.At, "seed %d %s: added when its second JoinGroup arrives (not the first)", seed, m)
			added = append(added, tlAt(add))
		}
		slices.Sort(added)
		prep, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGroupState && e.State == "PreparingRebalance" })
		require.True(t, ok)
		assert.Equal(t, "Empty", prep.Detail, "seed %d: Empty → PreparingRebalance", seed)
		assert.Equal(t, added[0], tlAt(prep), "seed %d: the first member added starts the (initial-delay) rebalance", seed)
		for _, a := range added[1:] {
			require.Less(t, a, added[0]+delay, "seed %d: all members arrive inside the first window (scenario premise)", seed)
		}
		gen, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGenerationComplete })
		require.True(t, ok, "seed %d: generation 1 completes", seed)
		assert.Equal(t, int32(1), gen.Gen)
		assert.Equal(t, int32(members), gen.Count)
		assert.Equal(t, added[0]+2*delay, tlAt(gen), "seed %d: generation 1 = first member added + 2 × initial delay (one extension)", seed)
		assert.Equal(t, tlInitialJoinCompletes(added[0], added[1:], delay, sc.Groups[0].Client.MaxPollInterval), tlAt(gen))

		// CompletingRebalance at once; the leader's SyncGroup appends the
		// group record; Stable at the append (append latency 0).
		cr, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGroupState && e.State == "CompletingRebalance" })
		require.True(t, ok)
		assert.Equal(t, gen.At, cr.At)
		leaderName := ""
		for i := 0; i < members; i++ {
			m := fmt.Sprintf("g-%d", i)
			j, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvJoined && e.Node == m })
			require.True(t, ok, "seed %d %s joined", seed, m)
			if j.Detail == "leader" {
				assert.Empty(t, leaderName, "seed %d: one leader", seed)
				leaderName = m
				assert.Equal(t, int32(members), j.Count, "seed %d: the leader gets every member's subscription", seed)
			}
			// §8.1 (2.6.1+): the heartbeat thread is enabled on JoinGroup
			// success; its first heartbeat one interval later, none before.
			hbs := simtest.Find(tr, tlMsg(tracing.EvSend, m, protocol.APIHeartbeat, true))
			require.NotEmpty(t, hbs, "seed %d %s heartbeats", seed, m)
			assert.Equal(t, j.At+sim.Instant(hbInterval), hbs[0].At, "seed %d %s: first heartbeat = JoinGroup response + heartbeat.interval.ms", seed, m)
			st, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvAssigned && e.Node == m })
			require.True(t, ok, "seed %d %s assigned", seed, m)
			assert.Len(t, st.Partitions, 8/members)
		}
		require.NotEmpty(t, leaderName, "seed %d: a leader", seed)
		leaderSync, ok := tlFirst(tr, tlBrokerGot(leaderName, protocol.APISyncGroup))
		require.True(t, ok)
		persisted, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGroupPersisted })
		require.True(t, ok)
		stable, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGroupState && e.State == "Stable" })
		require.True(t, ok)
		assert.Equal(t, leaderSync.At, persisted.At, "seed %d: the leader's SyncGroup appends the group record", seed)
		assert.Equal(t, persisted.At, stable.At, "seed %d: Stable once the record is appended", seed)
		assert.Equal(t, int32(1), stable.Gen)
	}
}

// TestTimelineFollowerSyncTimeoutSlowLeader — §17.6 "Follower SyncGroup
// timeouts with slow leaders" and §12.7: the leader's assignor (inside the
// JoinGroup handler) runs longer than request.timeout.ms; each follower's
// SyncGroup times out exactly request.timeout.ms after it was sent, and the
// follower rediscovers the coordinator and rejoins. A 3.2 subscription
// rejoins with identical metadata and is answered at once (the group goes
// Stable when the leader syncs); with 3.4+ subscriptions (generation
// embedded, KIP-792) the rejoin restarts the rebalance, every time: the group
// never becomes Stable. Control: an assignor faster than the request timeout
// causes no timeout.
func TestTimelineFollowerSyncTimeoutSlowLeader(t *testing.T) {
	const tmpl = `
name: slow-leader
duration: 90s
coordinator: {brokers: 1, profile: kafka-3.x, group.initial.rebalance.delay.ms: 3000}
network: {latency: {dist: uniform, min: 1ms, max: 5ms}}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: %s, request.timeout.ms: 10000, max.poll.interval.ms: 60000, partition.assignment.strategy: range}
    workload: {assign.time: %s}
    start: {at: 0s, stagger: 0s}
`
	const reqTimeout = 10 * time.Second
	// check asserts the per-follower SyncGroup timing and returns the
	// number of SyncGroup timeouts.
	check := func(t *testing.T, seed uint64, tr []TraceEvent, assign time.Duration) int {
		t.Helper()
		timeouts := 0
		leaders := simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvJoined && e.Detail == "leader" })
		require.NotEmpty(t, leaders)
		for _, l := range leaders {
			// The leader's SyncGroup goes out when its assignor returns.
			s, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvSend, l.Node, protocol.APISyncGroup, true)(e) && e.At >= l.At
			})
			if ok && tlAt(s) < 85*time.Second {
				assert.Equal(t, l.At+sim.Instant(assign), s.At, "seed %d: leader SyncGroup = its JoinGroup response + assign.time", seed)
			}
		}
		for _, s := range simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == tracing.EvSend && e.Req && e.API == protocol.APISyncGroup }) {
			m := s.Node
			resp, answered := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvDeliver, m, protocol.APISyncGroup, false)(e) && e.Corr == s.Corr
			})
			to, timedOut := tlFirst(tr, func(e *TraceEvent) bool {
				return e.Kind == protocol.EvRequestTimeout && e.Node == m && e.API == protocol.APISyncGroup && e.At > s.At
			})
			deadline := s.At + sim.Instant(reqTimeout)
			if answered && resp.At < deadline {
				if timedOut {
					assert.Greater(t, to.At, resp.At, "seed %d %s: no timeout of an answered SyncGroup", seed, m)
				}
				continue
			}
			if tlDur(deadline) > 89*time.Second {
				continue
			}
			timeouts++
			require.True(t, timedOut, "seed %d %s: SyncGroup sent at %v unanswered: request-timeout", seed, m, tlAt(s))
			assert.Equal(t, deadline, to.At, "seed %d %s: SyncGroup times out exactly request.timeout.ms after it was sent", seed, m)
			// ... then the follower rejoins before it syncs again.
			nextJoin, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvSend, m, protocol.APIJoinGroup, true)(e) && e.At >= to.At
			})
			require.True(t, ok, "seed %d %s: rejoins after the timeout", seed, m)
			nextSync, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvSend, m, protocol.APISyncGroup, true)(e) && e.At > to.At
			})
			if ok {
				assert.Less(t, nextJoin.At, nextSync.At, "seed %d %s", seed, m)
			}
			assert.LessOrEqual(t, tlAt(nextJoin)-tlAt(to), 2*time.Second, "seed %d %s: rediscovery and rejoin are quick", seed, m)
			dead, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvCoordinatorDead && e.Node == m && e.At >= to.At })
			require.True(t, ok)
			assert.Equal(t, to.At, dead.At, "seed %d %s: the timeout disconnects (coordinator marked unknown)", seed, m)
		}
		return timeouts
	}
	t.Run("kafka-3.2 rejoin answered at once", func(t *testing.T) {
		sc := simtest.Parse(t, fmt.Sprintf(tmpl, "kafka-3.2", "15s"))
		for _, seed := range tlSeeds {
			res := run(t, sc, seed, Options{KeepTrace: true})
			tr := res.Trace
			assert.Equal(t, 2, check(t, seed, tr, 15*time.Second), "seed %d: each follower times out once", seed)
			gens := simtest.Find(tr, simtest.KindOf(protocol.EvGenerationComplete, ""))
			assert.Len(t, gens, 1, "seed %d: identical metadata: no new rebalance", seed)
			assert.Len(t, simtest.Find(tr, simtest.KindOf(protocol.EvRebalanceStart, "")), 1, "seed %d", seed)
			assert.True(t, res.Summary.Groups[0].StableAtEnd, "seed %d", seed)
		}
	})
	t.Run("kafka-3.x rejoin restarts the rebalance", func(t *testing.T) {
		sc := simtest.Parse(t, fmt.Sprintf(tmpl, "kafka-3.x", "15s"))
		for _, seed := range tlSeeds {
			res := run(t, sc, seed, Options{KeepTrace: true})
			tr := res.Trace
			n := check(t, seed, tr, 15*time.Second)
			assert.GreaterOrEqual(t, n, 8, "seed %d: followers time out round after round", seed)
			// Every follower rejoin that reaches the coordinator in
			// CompletingRebalance restarts the rebalance at that instant.
			restarts := simtest.Find(tr, func(e *TraceEvent) bool {
				return e.Kind == protocol.EvGroupState && e.State == "PreparingRebalance" && e.Detail == "CompletingRebalance"
			})
			assert.NotEmpty(t, restarts, "seed %d", seed)
			for _, r := range restarts {
				j, ok := tlFirst(tr, func(e *TraceEvent) bool {
					return e.Kind == tracing.EvDeliver && e.Req && e.API == protocol.APIJoinGroup && e.At == r.At
				})
				if assert.True(t, ok, "seed %d: restart at %v is a JoinGroup arriving", seed, tlAt(r)) {
					assert.NotEqual(t, tlLeaderAt(tr, r.At), j.Peer, "seed %d: from a follower", seed)
				}
			}
			assert.Empty(t, simtest.Find(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGroupState && e.State == "Stable" }),
				"seed %d: never Stable while the assignor outlasts the request timeout", seed)
		}
	})
	t.Run("control: fast assignor", func(t *testing.T) {
		sc := simtest.Parse(t, fmt.Sprintf(tmpl, "kafka-3.x", "5s"))
		for _, seed := range tlSeeds {
			res := run(t, sc, seed, Options{KeepTrace: true})
			assert.Zero(t, check(t, seed, res.Trace, 5*time.Second), "seed %d", seed)
			assert.Empty(t, simtest.Find(res.Trace, simtest.KindOf(protocol.EvRequestTimeout, "")), "seed %d", seed)
			assert.True(t, res.Summary.Groups[0].StableAtEnd)
		}
	})
}

const tlMixedScenario = `
name: mixed-max-poll
duration: %s
coordinator: {brokers: 1, profile: %s, group.initial.rebalance.delay.ms: 3000}
network: {latency: {dist: uniform, min: 1ms, max: 5ms}}
topics: [{name: t, partitions: 6}]
groups:
  - id: g
    members: 3
    subscribe: [t]
    client: {profile: %s, session.timeout.ms: %d, max.poll.interval.ms: 120000, partition.assignment.strategy: range}
    workload: {poll.interval: {dist: uniform, min: 50ms, max: 150ms}}
    start: {at: 0s, stagger: 1s}
faults:
  - {at: 29s, slow-poll: g-0, for: 60s}
  - {at: 30s, join: g}
`

// tlMixedRun runs tlMixedScenario with g-0 and g-1 on max.poll.interval.ms
// 120000 and g-2 and the joiner g-3 on 10000: the broker's rebalance timeout
// is the max (120 s); g-2's JoinGroup times out client-side after
// max(request.timeout.ms, 10 s + 5 s) = 30 s.
func tlMixedRun(t *testing.T, profile, broker string, seed uint64) *Result {
	return tlMixedRunSession(t, profile, broker, 10*time.Second, 150*time.Second, seed)
}

func tlMixedRunSession(t *testing.T, profile, broker string, session, duration time.Duration, seed uint64) *Result {
	sc := simtest.Parse(t, fmt.Sprintf(tlMixedScenario, duration, broker, profile, session.Milliseconds()))
	return tlRunSwitching(t, sc, seed, 1500*time.Millisecond, func(c *client.Config) { c.MaxPollInterval = 10 * time.Second })
}

// tlSmallMaxPoll are the members of tlMixedRun on max.poll.interval.ms 10000.
var tlSmallMaxPoll = []string{"g-2", "g-3"}

// tlJoinTimedOut asserts that member's first JoinGroup timeout after the
// rebalance start came exactly joinTimeout after one of its JoinGroups was
// sent, and returns the timeout event.
func tlJoinTimedOut(t *testing.T, seed uint64, tr []TraceEvent, m string, after sim.Instant, joinTimeout time.Duration) TraceEvent {
	t.Helper()
	to, ok := tlFirst(tr, func(e *TraceEvent) bool {
		return e.Kind == protocol.EvRequestTimeout && e.Node == m && e.API == protocol.APIJoinGroup && e.At > after
	})
	require.True(t, ok, "seed %d %s: its JoinGroup times out client-side", seed, m)
	_, sent := tlFirst(tr, func(e *TraceEvent) bool {
		return tlMsg(tracing.EvSend, m, protocol.APIJoinGroup, true)(e) && e.At == to.At-sim.Instant(joinTimeout)
	})
	assert.True(t, sent, "seed %d %s: timeout at %v = a JoinGroup send + max(request.timeout.ms, max.poll.interval.ms + 5 s)", seed, m, tlAt(to))
	return to
}

// TestTimelineMixedMaxPollInterval — §17.6 "Mixed max.poll.interval.ms"
// (§5.5, §12.5): the broker waits the max of the members' rebalance
// timeouts, but each client's JoinGroup times out at max(request.timeout.ms,
// own max.poll.interval.ms + 5 s); a member with a small value times out
// client-side, disconnects and re-sends while the join is still collecting.
// A 3.x client keeps its member id, so the join completes with every process
// once and nobody is removed.
func TestTimelineMixedMaxPollInterval(t *testing.T) {
	const joinTimeout = 30 * time.Second // max(30 s, 10 s + 5 s)
	for _, seed := range tlSeeds {
		res := tlMixedRun(t, "kafka-3.x", "kafka-3.x", seed)
		tr := res.Trace
		start, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvRebalanceStart && tlAt(*e) >= 30*time.Second })
		require.True(t, ok)
		gen, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGenerationComplete && e.At > start.At })
		require.True(t, ok)
		require.Greater(t, tlAt(gen), 89*time.Second, "seed %d: the join waits for g-0 (premise)", seed)
		for _, m := range tlSmallMaxPoll {
			to := tlJoinTimedOut(t, seed, tr, m, start.At, joinTimeout)
			assert.Less(t, to.At, gen.At, "seed %d %s: while the join is still collecting", seed, m)
			dead, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvCoordinatorDead && e.Node == m && e.At >= to.At })
			require.True(t, ok)
			assert.Equal(t, to.At, dead.At, "seed %d %s: disconnect", seed, m)
			resend, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvSend, m, protocol.APIJoinGroup, true)(e) && e.At >= to.At
			})
			require.True(t, ok, "seed %d %s: re-sends its JoinGroup", seed, m)
			assert.Less(t, resend.At, gen.At, "seed %d %s", seed, m)
			assert.LessOrEqual(t, tlAt(resend)-tlAt(to), 2*time.Second, "seed %d %s", seed, m)
		}
		for _, m := range []string{"g-0", "g-1"} {
			for _, e := range simtest.Find(tr, simtest.KindOf(protocol.EvRequestTimeout, m)) {
				t.Errorf("seed %d: %s (max.poll.interval.ms 120000) times out %v at %v", seed, m, e.API, tlAt(e))
			}
		}
		_, ids := tlIDs(tr)
		for _, m := range tlSmallMaxPoll {
			assert.Len(t, ids[m], 1, "seed %d %s: 3.x keeps the member id", seed, m)
		}
		assert.Equal(t, int32(4), gen.Count, "seed %d", seed)
		assert.Empty(t, simtest.Find(tr, simtest.KindOf(protocol.EvMemberRemoved, "")), "seed %d", seed)
		assert.True(t, res.Summary.Groups[0].StableAtEnd, "seed %d", seed)
	}
}

// TestTimelineAbandonedMemberKafka27 — §17.6 "2.6.1–2.8.0 clients and
// coordinator blips" (KAFKA-13214): a retriable JoinGroup failure (here the
// client-side JoinGroup timeout of the mixed-max.poll group) makes a 2.7
// client rejoin with an empty member id; the abandoned id stays on the
// broker awaiting join (immune to expiry), is carried into the next
// generation, never syncs or heartbeats, and is removed one session timeout
// after the join completed (2.8.0 broker), causing another rebalance. A
// 2.8.1+ client keeps its id: no abandoned member.
func TestTimelineAbandonedMemberKafka27(t *testing.T) {
	const joinTimeout = 30 * time.Second
	const session = 10 * time.Second // kafka-2.x default
	for _, seed := range tlSeeds {
		res := tlMixedRun(t, "kafka-2.7", "kafka-2.x", seed)
		tr := res.Trace
		owner, ids := tlIDs(tr)
		start, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvRebalanceStart && tlAt(*e) >= 30*time.Second })
		require.True(t, ok)
		gen, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGenerationComplete && e.At > start.At })
		require.True(t, ok)
		for _, m := range tlSmallMaxPoll {
			to := tlJoinTimedOut(t, seed, tr, m, start.At, joinTimeout)
			require.Len(t, ids[m], 2, "seed %d %s: joins again under a new id", seed, m)
			old := ids[m][0]
			reset, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return e.Kind == protocol.EvGenerationReset && e.Node == m && e.API == protocol.APIJoinGroup && e.At >= to.At
			})
			require.True(t, ok, "seed %d %s", seed, m)
			// joinGroupIfNeeded sees the failed future on the next poll(),
			// after ensureCoordinatorReady has rediscovered the coordinator.
			// The timeout closed the coordinator connection, which is in
			// reconnect backoff (40–60 ms) meanwhile: a lookup that finds
			// it is undone ("coordinator unavailable") and
			// ensureCoordinatorReady sleeps retry.backoff.ms (100 ms)
			// before the next lookup, which finds it connectable.
			var found TraceEvent
			for _, e := range tr {
				if e.Kind == protocol.EvCoordinatorFound && e.Node == m && e.At >= to.At && e.At <= reset.At {
					found = e
				}
			}
			require.NotZero(t, found.At)
			assert.LessOrEqual(t, reset.At-to.At, sim.Instant(100*time.Millisecond+10*time.Millisecond), "seed %d %s: within retry.backoff.ms and two lookups", seed, m)
			assert.Equal(t, found.At, reset.At, "seed %d %s: the retriable failure resets the generation once the coordinator is known again", seed, m)
			assert.Equal(t, protocol.NetworkException.String(), reset.Reason, "seed %d %s: the timeout is a disconnect", seed, m)
			rejoin, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvSend, m, protocol.APIJoinGroup, true)(e) && e.At >= reset.At
			})
			require.True(t, ok)
			r, ok := tlFirst(tr, func(e *TraceEvent) bool {
				return tlMsg(tracing.EvDeliver, m, protocol.APIJoinGroup, false)(e) && e.Corr == rejoin.Corr
			})
			require.True(t, ok)
			assert.Equal(t, protocol.MemberIDRequired, r.Err, "seed %d %s: rejoins with an empty member id", seed, m)
			assert.Equal(t, "drop-id", reset.Detail, "seed %d %s", seed, m)
			assert.Less(t, reset.At, gen.At, "seed %d %s: while the join collects", seed, m)
			rm, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvMemberRemoved && e.Peer == old })
			require.True(t, ok, "seed %d %s: the abandoned id is removed eventually", seed, m)
			assert.Greater(t, rm.At, gen.At, "seed %d %s: immune while awaiting join", seed, m)
			assert.Equal(t, "session-expired", rm.Reason)
			assert.Equal(t, tlAt(gen)+session, tlAt(rm), "seed %d %s: one session timeout after the join completed", seed, m)
			assert.Equal(t, m, owner[old])
		}
		assert.Equal(t, int32(6), gen.Count, "seed %d: 4 processes + the 2 abandoned ids carried into the generation", seed)
		st, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvRebalanceStart && e.At > gen.At })
		require.True(t, ok)
		assert.Equal(t, gen.At+sim.Instant(session), st.At, "seed %d: another rebalance at the removal", seed)
		assert.Equal(t, "session-expired", st.Reason)
		g := res.Summary.Groups[0]
		assert.Equal(t, 2, g.Evictions, "seed %d", seed)
		assert.Equal(t, 2, g.FalseEvictions, "seed %d: their processes are alive", seed)

		fixed := tlMixedRun(t, "kafka-2.8", "kafka-2.x", seed)
		_, fids := tlIDs(fixed.Trace)
		for _, m := range tlSmallMaxPoll {
			tlJoinTimedOut(t, seed, fixed.Trace, m, start.At, joinTimeout)
			assert.Len(t, fids[m], 1, "seed %d %s: 2.8.1 keeps the id", seed, m)
		}
		assert.Empty(t, simtest.Find(fixed.Trace, simtest.KindOf(protocol.EvMemberRemoved, "")), "seed %d", seed)
		assert.Less(t, fixed.Summary.Groups[0].RebalanceCount, g.RebalanceCount, "seed %d", seed)

		// 2.8.1+/3.0 broker (KAFKA-12890 DelayedSync) and a session longer
		// than the rebalance timeout: the abandoned ids are removed by the
		// pending-sync expiry, rebalance timeout (120 s) after the join.
		ds := tlMixedRunSession(t, "kafka-2.7", "kafka-3.x", 150*time.Second, 230*time.Second, seed)
		dsOwner, dsIDs := tlIDs(ds.Trace)
		dsStart, ok := tlFirst(ds.Trace, func(e *TraceEvent) bool { return e.Kind == protocol.EvRebalanceStart && tlAt(*e) >= 30*time.Second })
		require.True(t, ok)
		dsGen, ok := tlFirst(ds.Trace, func(e *TraceEvent) bool { return e.Kind == protocol.EvGenerationComplete && e.At > dsStart.At })
		require.True(t, ok)
		assert.Equal(t, int32(6), dsGen.Count, "seed %d: DelayedSync variant: abandoned ids carried into the generation", seed)
		for _, m := range tlSmallMaxPoll {
			require.Len(t, dsIDs[m], 2, "seed %d %s", seed, m)
			rm, ok := tlFirst(ds.Trace, func(e *TraceEvent) bool { return e.Kind == protocol.EvMemberRemoved && e.Peer == dsIDs[m][0] })
			require.True(t, ok, "seed %d %s: removed by the pending-sync expiry", seed, m)
			assert.Equal(t, "sync-timeout", rm.Reason, "seed %d %s", seed, m)
			assert.Equal(t, tlAt(dsGen)+120*time.Second, tlAt(rm), "seed %d %s: rebalance timeout after the join", seed, m)
			assert.Equal(t, m, dsOwner[dsIDs[m][0]])
		}
	}
}
