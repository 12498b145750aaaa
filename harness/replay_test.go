package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/javarand"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
)

// replaySrc: one classic member, auto-commit every 2 s, the default
// lognormal processing time; it crashes at 20 s and restarts 2 s later (a
// second incarnation, which joins once the first's session expires).
const replaySrc = `
name: replay
duration: 45s
seed: 1
timing: exact
coordinator: {brokers: 1, profile: kafka-3.9, group.initial.rebalance.delay.ms: 0}
topics: [{name: orders, partitions: 4}]
groups:
  - id: g
    members: 1
    subscribe: [orders]
    client: {profile: kafka-3.9, auto.commit.interval.ms: 2000, session.timeout.ms: 6000, heartbeat.interval.ms: 2000}
    workload: {poll.interval: {dist: lognormal, median: 200ms, p99: 2s}}
faults:
  - {at: 20s, crash: g-0, for: 2s}
`

// replayGrid is where the driver's consume loop, whose first poll with
// records ran at from, ends its processing steps: from + the prefix sums
// of its pollInterval draws (Driver.java consume: poll.timeout and
// callback.time are constant, so every draw of the Random is a
// pollInterval's), up to until.
func replayGrid(seed int64, from, until time.Duration) map[time.Duration]bool {
	d := javarand.Dist{Kind: "lognormal", A: 200, B: 2000}
	r := javarand.New(seed)
	grid := map[time.Duration]bool{}
	for t := from + time.Duration(d.Draw(r))*time.Millisecond; t <= until; t += time.Duration(d.Draw(r)) * time.Millisecond {
		grid[t] = true
	}
	return grid
}

// TestDriverSeedReplaysProcessingSteps: with a driver seed per incarnation
// (Scenario.DriverSeeds, "member.inc"), the member's auto-commits — sent by
// the first poll() at or after the commit deadline
// (ConsumerCoordinator.maybeAutoCommitOffsetsAsync @3.9.0-rc3) — fall on the
// poll instants of the driver's draws from that incarnation's own seed,
// counted from its first assignment plus its measured wait for its first
// records where one is given (Scenario.FirstRecords, here the first
// incarnation's); without the seeds they do not.
func TestDriverSeedReplaysProcessingSteps(t *testing.T) {
	seeds := map[string]int64{"g-0.1": 2157490994059664310, "g-0.2": 8359315389184005889}
	firsts := map[string]time.Duration{"g-0.1": 252 * time.Millisecond}
	commits := func(driver map[string]int64) (assigned, sent [2][]time.Duration) {
		sc := simtest.Parse(t, replaySrc)
		sc.DriverSeeds, sc.FirstRecords = driver, firsts
		res := run(t, sc, 1, Options{KeepTrace: true})
		inc := 0
		for i := range res.Trace {
			e := &res.Trace[i]
			at := time.Duration(e.At)
			switch {
			case e.Node != "g-0":
			case e.Kind == protocol.EvAssigned && at > 20*time.Second:
				inc = 1
				assigned[inc] = append(assigned[inc], at)
			case e.Kind == protocol.EvAssigned:
				assigned[inc] = append(assigned[inc], at)
			case e.Kind == tracing.EvSend && e.API == protocol.APIOffsetCommit:
				sent[inc] = append(sent[inc], at)
			}
		}
		return assigned, sent
	}
	assigned, sent := commits(seeds)
	for inc, key := range []string{"g-0.1", "g-0.2"} {
		require.NotEmpty(t, assigned[inc], "%s was assigned", key)
		require.GreaterOrEqual(t, len(sent[inc]), 4, "%s auto-committed", key)
		grid := replayGrid(seeds[key], assigned[inc][0]+firsts[key], 50*time.Second)
		for _, at := range sent[inc] {
			assert.True(t, grid[at], "%s: the auto-commit at %v is not at one of the driver's poll instants", key, at)
		}
	}

	// The member's own stream: the same commits are off the grid.
	assigned, sent = commits(nil)
	require.NotEmpty(t, assigned[0])
	grid := replayGrid(seeds["g-0.1"], assigned[0][0]+firsts["g-0.1"], 50*time.Second)
	on := 0
	for _, at := range sent[0] {
		if grid[at] {
			on++
		}
	}
	assert.Less(t, on, len(sent[0]), "without driver seeds every commit fell on the driver's grid")
}
