package harness

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// TestMeasureWindow: measure: {from: 30s} leaves the startup join out of
// the settle episodes, the unowned partition-seconds and the member-hours,
// and keeps the crash's episode (issue 10: "startup dominates
// unowned_partition_seconds and hides the effect studied").
func TestMeasureWindow(t *testing.T) {
	faults := "  - {at: 40s, crash: g-1}\n"
	whole := parseSmall(t, "90s", 1, faults)
	windowed := parseSmall(t, "90s", 1, faults)
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

// TestInvalidSessionTimeout is issue 10's "a configuration the broker
// rejects looks best": session.timeout.ms below group.min.session.timeout.ms
// kills every member with INVALID_SESSION_TIMEOUT; the run is invalid and
// says why.
func TestInvalidSessionTimeout(t *testing.T) {
	sc := parseSmall(t, "30s", 1, "")
	for i := range sc.Groups {
		sc.Groups[i].Client.SessionTimeout = 5 * time.Second
	}
	sc.Coordinator.MinSessionTimeout = 6 * time.Second
	s := run(t, sc, 3, Options{}).Summary
	assert.False(t, s.Valid)
	assert.Contains(t, s.InvalidReason, "INVALID_SESSION_TIMEOUT")
	ok := run(t, parseSmall(t, "30s", 1, ""), 3, Options{}).Summary
	assert.True(t, ok.Valid)
	assert.Empty(t, ok.InvalidReason)
}

// TestFirstFaultSwarm: a swarm's first fault is the run's first fault
// (fault-relative figures count from it; they read only faults[0] before).
func TestFirstFaultSwarm(t *testing.T) {
	text := fmt.Sprintf(small, "120s", 1, "  []\n") + "swarm: {pause: 2, pause.for: 1s}\n"
	sc, err := scenario.Parse("obs.yaml", []byte(text))
	require.NoError(t, err)
	res := run(t, sc, 3, Options{})
	first := int64(-1)
	for _, o := range res.Observations {
		if o.Kind == ObsFault {
			first = int64(o.At) / 1e6
			break
		}
	}
	require.GreaterOrEqual(t, first, int64(0), "the swarm drew a fault")
	assert.Equal(t, first, res.Summary.Groups[0].FirstFaultMs)
	none := run(t, parseSmall(t, "30s", 1, ""), 3, Options{}).Summary.Groups[0]
	assert.Equal(t, int64(-1), none.FirstFaultMs)
}

// TestSeedsVaryLeavePhase is issue 10's "seeds that vary nothing":
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
	exact.Timing = scenario.TimingExact
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

// TestSettleEpisodeSpansGenerations is issue 10's "rebalances 2 beside final
// generation 36": a settle episode records the generations it spans, the
// summary counts generation bumps and the members' completed rebalances,
// and the three agree with the observations. Here g-1's poll takes longer
// than max.poll.interval.ms: it leaves, the group rebalances, and g-1 rejoins
// within the same episode (two generations).
func TestSettleEpisodeSpansGenerations(t *testing.T) {
	sc := parse(t, `
name: spans
duration: 60s
coordinator: {brokers: 1, profile: kafka-3.x}
network: {latency: 1ms}
topics: [{name: t, partitions: 4}]
groups:
  - id: g
    members: 2
    subscribe: [t]
    client: {profile: kafka-3.x, max.poll.interval.ms: 5000}
    workload: {poll.interval: 200ms, poll.timeout: 500ms}
faults:
  - {at: 20s, slow-poll: g-1, for: 8s}
`)
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
	c := CountObservations(res.Observations, "g")
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
	src := fmt.Sprintf(small, "40s", 1, "  - {at: 20s, crash: g-1}\n  - {at: 20500ms, restart: g-1}\n")
	src = strings.Replace(src, "seed: 3\n", "seed: 3\ntiming: realistic\n", 1)
	sc, err := scenario.Parse("obs.yaml", []byte(src))
	require.NoError(t, err)
	for seed := uint64(1); seed <= 10; seed++ {
		var crash, restart sim.Instant = -1, -1
		for _, o := range run(t, sc, seed, Options{}).Observations {
			if o.Kind == ObsFault && o.Fault == "crash" {
				crash = o.At
			}
			if o.Kind == ObsFault && o.Fault == "restart" {
				restart = o.At
			}
		}
		require.GreaterOrEqual(t, crash, sim.Instant(20*time.Second), "seed %d", seed)
		assert.Equal(t, sim.Instant(500*time.Millisecond), restart-crash, "seed %d", seed)
	}
}

// TestFencesAreNotEvictions is issue 10's rolling-restart-static case
// ("evictions 0" beside eight "EVICTION … removed (fenced)" lines): a static
// member replaced by its new process is a fence of the old process, which
// the JoinGroup response that gave out the old member id identifies (not a
// name in a text field).
func TestFencesAreNotEvictions(t *testing.T) {
	sc := load(t, "rolling-restart-static")
	res := run(t, sc, 1, Options{})
	g := res.Summary.Groups[0]
	c := CountObservations(res.Observations, g.ID)
	require.Positive(t, c.Fences)
	assert.Equal(t, c.Fences, g.Fences)
	assert.Zero(t, g.Evictions)
	assert.Zero(t, c.Evictions)
	for _, o := range res.Observations {
		if o.Kind != ObsFence {
			continue
		}
		assert.NotEmpty(t, o.Member, "fence of %s maps to a member", o.MemberID)
		assert.True(t, strings.HasPrefix(o.MemberID, o.Member+"-"), "member id %s was given to %s", o.MemberID, o.Member)
		assert.Positive(t, o.Process, "the fenced process is known")
	}
}
