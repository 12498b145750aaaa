// Tests for cohorts (INTERFACE.md "Cohorts"): several `groups:` entries with
// one id run as ONE consumer group whose members have different client
// configurations. Goal: each process runs its own cohort's configuration,
// the coordinator sees one group (protocol selection over every member,
// the max rebalance timeout), join faults add to the last cohort, and the
// summary has one entry per group id.
package harness

import (
	"fmt"
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

// cohortRun runs sc for seed and returns the world as it ended (its last
// persisted group records, slots and metrics) with the result.
func cohortRun(t *testing.T, sc *scenario.Scenario, seed uint64) (*world, *Result) {
	t.Helper()
	w, err := newWorld(sc, seed, Options{KeepTrace: true})
	require.NoError(t, err)
	stop := w.run()
	return w, &Result{Summary: w.summary(), Stop: stop, Trace: w.rec.events}
}

const cohortAssignorScenario = `
name: rolling-upgrade-assignors
duration: 60s
coordinator: {brokers: 1, profile: kafka-3.x}
network: {latency: {dist: uniform, min: 1ms, max: 5ms}}
topics: [{name: orders, partitions: 6}, {name: refunds, partitions: 2}]
groups:
  - id: g                        # not yet upgraded
    members: 2
    subscribe: [orders]
    client: {profile: %s, partition.assignment.strategy: %s}
    start: {at: 0s, stagger: 100ms}
  - id: g                        # upgraded
    members: 2
    subscribe: [orders, refunds]
    client: {profile: kafka-3.x, partition.assignment.strategy: [cooperative-sticky, range]}
    start: {at: 200ms, stagger: 100ms}
`

// TestCohortsMixedAssignors — a rolling upgrade from range to
// [cooperative-sticky, range] (KIP-429's upgrade path; franz-go #366 mixes
// eager and cooperative members): GroupMetadata.selectProtocol picks among
// the protocols every member supports, so while one member is on range only,
// the group runs range, and it is Stable with every partition of both
// cohorts' subscriptions owned once. Control: when every member lists
// cooperative-sticky first, the group selects it.
func TestCohortsMixedAssignors(t *testing.T) {
	for _, tc := range []struct {
		profile, strategy, want string
	}{
		{"kafka-2.x", "range", "range"},
		{"kafka-3.x", "[cooperative-sticky, range]", "cooperative-sticky"},
	} {
		sc := simtest.Parse(t, fmt.Sprintf(cohortAssignorScenario, tc.profile, tc.strategy))
		for _, seed := range tlSeeds {
			w, res := cohortRun(t, sc, seed)
			require.Len(t, w.groups, 1, "one group for two cohorts")
			g := w.groups[0]
			require.NotNil(t, g.record, "seed %d: a generation was persisted", seed)
			assert.Equal(t, tc.want, g.record.ProtocolName, "seed %d %s: selected protocol", seed, tc.strategy)
			assert.Len(t, g.record.Members, 4, "seed %d: one generation with both cohorts", seed)
			require.Len(t, res.Summary.Groups, 1)
			sum := res.Summary.Groups[0]
			assert.Equal(t, "g", sum.ID)
			assert.True(t, sum.StableAtEnd, "seed %d %s", seed, tc.strategy)
			assert.Empty(t, res.Summary.InvariantViolations, "seed %d", seed)
			assert.Zero(t, sum.DoubleOwnedPartitionSeconds, "seed %d", seed)
			assert.Len(t, g.partitionList(), 8, "the group's partitions: orders and refunds")
			assert.Zero(t, g.m.zero, "seed %d: every partition of both subscriptions owned at the end", seed)
			for _, s := range w.slots {
				for _, tp := range s.owned {
					if tp.Topic == "refunds" {
						assert.Equal(t, int32(1), s.cohort, "seed %d: %s owns %v but does not subscribe to it", seed, s.name, tp)
					}
				}
			}
		}
	}
}

const cohortMixedMaxPollScenario = `
name: mixed-max-poll-cohorts
duration: 150s
coordinator: {brokers: 1, profile: kafka-3.x, group.initial.rebalance.delay.ms: 3000}
network: {latency: {dist: uniform, min: 1ms, max: 5ms}}
topics: [{name: t, partitions: 6}]
groups:
  - id: g                        # g-0, g-1: a slow batch cohort
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.x, max.poll.interval.ms: 120000, partition.assignment.strategy: range}
    workload: {poll.interval: {dist: uniform, min: 50ms, max: 150ms}}
    start: {at: 0s, stagger: 1s}
  - id: g                        # g-2 (and g-3, which the join adds): a short max.poll.interval.ms
    members: 1
    subscribe: [t]
    client: {profile: kafka-3.x, max.poll.interval.ms: 10000, partition.assignment.strategy: range}
    workload: {poll.interval: {dist: uniform, min: 50ms, max: 150ms}}
    start: {at: 2s}
faults:
  - {at: 29s, slow-poll: g-0, for: 60s}
  - {at: 30s, join: g}
`

// TestCohortsMixedMaxPollInterval — §17.6 "Mixed max.poll.interval.ms"
// written as cohorts (TestTimelineMixedMaxPollInterval switches the
// configuration mid-run instead): the broker's rebalance waits the max of
// the members' rebalance timeouts (120 s, for g-0 stuck in processing), but
// each client's JoinGroup times out at max(request.timeout.ms, its own
// max.poll.interval.ms + 5 s): g-2 and the joiner g-3 (the join fault adds
// to the last cohort) time out client-side at 30 s while the join is still
// collecting; g-0 and g-1 (120 s + 5 s) never do.
func TestCohortsMixedMaxPollInterval(t *testing.T) {
	const joinTimeout = 30 * time.Second // max(30 s, 10 s + 5 s)
	sc := simtest.Parse(t, cohortMixedMaxPollScenario)
	for _, seed := range tlSeeds {
		w, res := cohortRun(t, sc, seed)
		tr := res.Trace
		g := w.groups[0]
		require.Len(t, g.slots, 4)
		for i, want := range []int32{0, 0, 1, 1} {
			assert.Equal(t, want, w.slots[g.slots[i]].cohort, "g-%d's cohort", i)
		}
		start, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvRebalanceStart && tlAt(*e) >= 30*time.Second })
		require.True(t, ok)
		gen, ok := tlFirst(tr, func(e *TraceEvent) bool { return e.Kind == protocol.EvGenerationComplete && e.At > start.At })
		require.True(t, ok)
		require.Greater(t, tlAt(gen), 89*time.Second, "seed %d: the join waits for g-0 (premise)", seed)
		for _, m := range []string{"g-2", "g-3"} {
			to := tlJoinTimedOut(t, seed, tr, m, start.At, joinTimeout)
			assert.Less(t, to.At, gen.At, "seed %d %s: while the join is still collecting", seed, m)
		}
		for _, m := range []string{"g-0", "g-1"} {
			for _, e := range simtest.Find(tr, simtest.KindOf(protocol.EvRequestTimeout, m)) {
				t.Errorf("seed %d: %s (max.poll.interval.ms 120000) times out %v at %v", seed, m, e.API, tlAt(e))
			}
		}
		assert.Equal(t, int32(4), gen.Count, "seed %d", seed)
		assert.Empty(t, simtest.Find(tr, simtest.KindOf(protocol.EvMemberRemoved, "")), "seed %d", seed)
		require.Len(t, res.Summary.Groups, 1)
		assert.True(t, res.Summary.Groups[0].StableAtEnd, "seed %d", seed)
		assert.Empty(t, res.Summary.InvariantViolations, "seed %d", seed)
	}
}

const cohortStartScenario = `
name: cohort-starts
duration: 40s
coordinator: {brokers: 3, profile: kafka-3.x}
topics: [{name: a, partitions: 4}, {name: b, partitions: 4}]
groups:
  - id: pay
    members: 2
    subscribe: [a]
    start: {at: 0s, stagger: 1s}
  - id: other
    members: 1
    subscribe: [b]
  - id: pay
    members: 2
    subscribe: [a]
    client: {profile: kafka-2.x, group.instance.id: true}
    start: {at: 10s, stagger: 2s}
faults:
  - {at: 20s, join: pay}
  - {at: 25s, crash: pay-1}
`

// TestCohortsStartsJoinsAndSummary: each cohort starts on its own schedule
// (member i of the cohort at at + i*stagger), member indexes continue
// across cohorts, a join fault starts the next member as one of the last
// cohort (here static: its instance id is its name), and the summary has one
// entry per group id, in order of first appearance, counting every cohort.
func TestCohortsStartsJoinsAndSummary(t *testing.T) {
	sc := simtest.Parse(t, cohortStartScenario)
	w, res := cohortRun(t, sc, 1)
	started := map[string]sim.Instant{}
	for _, e := range simtest.Find(res.Trace, simtest.KindOf(tracing.EvProcess, "")) {
		if e.State == "started" {
			if _, seen := started[e.Node]; !seen {
				started[e.Node] = e.At
			}
		}
	}
	for name, at := range map[string]time.Duration{
		"pay-0": 0, "pay-1": time.Second, "pay-2": 10 * time.Second, "pay-3": 12 * time.Second,
		"pay-4": 20 * time.Second, "other-0": 0,
	} {
		got, ok := started[name]
		require.True(t, ok, "%s started", name)
		assert.Equal(t, at, tlDur(got), "%s start", name)
	}
	assert.Len(t, started, 6, "no other process")

	require.Len(t, w.groups, 2)
	pay := w.groups[0]
	assert.Equal(t, "pay", pay.id)
	assert.Equal(t, 4, pay.members)
	require.Len(t, pay.slots, 5)
	joiner := w.slots[pay.slots[4]]
	assert.Equal(t, "pay-4", joiner.name)
	assert.Equal(t, int32(1), joiner.cohort, "the join fault adds to the last cohort")
	// The coordinator's last record: the last cohort's processes (pay-4
	// included) joined static with their kafka-2.x session timeout, cohort
	// 0's dynamic with kafka-3.x's.
	require.NotNil(t, pay.record)
	static := map[string]time.Duration{}
	dynamic := 0
	for _, m := range pay.record.Members {
		if m.GroupInstanceID != "" {
			static[m.GroupInstanceID] = m.SessionTimeout
		} else {
			dynamic++
			assert.Equal(t, 45*time.Second, m.SessionTimeout, m.MemberID)
		}
	}
	assert.Equal(t, map[string]time.Duration{"pay-2": 10 * time.Second, "pay-3": 10 * time.Second, "pay-4": 10 * time.Second}, static)
	assert.Equal(t, 2, dynamic, "pay-0, and pay-1 (crashed at 25 s, its 45 s session not yet expired)")

	ids := []string{}
	for _, g := range res.Summary.Groups {
		ids = append(ids, g.ID)
	}
	assert.Equal(t, []string{"pay", "other"}, ids, "one summary per group id, first appearance first")
	p := res.Summary.Groups[0]
	// Member-seconds: pay-0 40, pay-1 24 (crashed at 25 s), pay-2 30,
	// pay-3 28, pay-4 20.
	assert.InDelta(t, (40.0+24+30+28+20)/3600, p.MemberHours, 1e-5)
	last := p.Rebalances[len(p.Rebalances)-1]
	assert.Equal(t, 5, last.Members, "the join's rebalance counts the live members of every cohort")
	assert.Equal(t, "join", last.Trigger)
	assert.True(t, p.StableAtEnd)
	assert.Empty(t, res.Summary.InvariantViolations)
}

// TestCohortsSwarmDrawsEveryCohort: the swarm draws its targets among the
// initial members of every cohort, named by their group-wide index.
func TestCohortsSwarmDrawsEveryCohort(t *testing.T) {
	sc := simtest.Parse(t, cohortStartScenario+"swarm: {pause: 600, pause.for: 1s}\n")
	seen := map[string]bool{}
	for _, f := range SwarmFaults(sc, 1) {
		require.Equal(t, scenario.FaultPause, f.Kind)
		_, _, ok := sc.ResolveMember(f.Target)
		require.True(t, ok, f.Target)
		seen[f.Target] = true
	}
	assert.Equal(t, map[string]bool{"pay-0": true, "pay-1": true, "pay-2": true, "pay-3": true, "other-0": true}, seen)
}
