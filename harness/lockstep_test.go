package harness

// Goal: the default workload does not phase-lock the
// group. A rolling restart of 40 members on the default processing time
// (scenario.DefaultPollInterval, lognormal): the members learn of the first
// rebalance at their heartbeats and rejoin at their next poll(), so their
// JoinGroup instants spread over at least the processing time's
// interquartile range; and eager (range) costs more unowned
// partition-seconds than cooperative-sticky, which keeps its partitions
// while it rejoins (KIP-429). With the old constant 100 ms every member
// rejoined within a few milliseconds and eager looked cheaper.

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness/tracing"
	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

func TestDefaultWorkloadIsNotLockStep(t *testing.T) {
	if testing.Short() {
		t.Skip("40-member runs")
	}
	src := `
name: rr40
duration: 300s
timing: realistic
coordinator: {brokers: 3, profile: kafka-3.x}
topics: [{name: orders, partitions: 120}]
groups:
  - id: g
    members: 40
    subscribe: [orders]
    client: {profile: kafka-3.x, partition.assignment.strategy: %s, session.timeout.ms: 45000}
faults:
  - {at: 60s, rolling-restart: g, interval: 5s, downtime: 2s}
`
	// The lognormal's quartiles: median·exp(±0.6745σ), σ = ln(p99/median)/2.3263:
	// 287 ms for the documented default (INTERFACE.md "Processing time").
	d := scenario.Dist{Kind: scenario.DistLognormal, Median: 200 * time.Millisecond, P99: 2 * time.Second}
	require.Equal(t, d, scenario.DefaultPollInterval, "the default INTERFACE.md documents")
	sigma := math.Log(float64(d.P99)/float64(d.Median)) / 2.3263
	iqr := time.Duration(float64(d.Median) * (math.Exp(0.6745*sigma) - math.Exp(-0.6745*sigma)))
	unowned := map[string]float64{}
	for _, strategy := range []string{"range", "cooperative-sticky"} {
		sc := simtest.Parse(t, fmt.Sprintf(src, strategy))
		require.False(t, sc.LockStep())
		for seed := uint64(1); seed <= 3; seed++ {
			res := run(t, sc, seed, Options{KeepTrace: true})
			g := res.Summary.Groups[0]
			unowned[strategy] += g.UnownedPartitionSecondsAfterFirstFault
			// Each member that was not restarted learns of the first
			// rebalance after the fault from a heartbeat answered
			// REBALANCE_IN_PROGRESS and rejoins at its next poll(): the
			// delay between the two is the rest of the batch it was
			// processing. In lock-step (a constant 100 ms) those delays lie
			// within one poll; with the default they spread over at least
			// the processing time's IQR.
			start := time.Duration(g.FirstFaultMs) * time.Millisecond
			learnt := map[string]time.Duration{}
			delays := map[string]time.Duration{}
			for _, e := range res.Trace {
				at := time.Duration(e.At)
				if at < start {
					continue
				}
				if at > start+8*time.Second {
					break
				}
				if e.Kind == tracing.EvDeliver && !e.Req && e.API == protocol.APIHeartbeat && e.Err == protocol.RebalanceInProgress {
					if _, ok := learnt[e.Node]; !ok {
						learnt[e.Node] = at
					}
				}
				if e.Kind == tracing.EvSend && e.Req && e.API == protocol.APIJoinGroup {
					if l, ok := learnt[e.Node]; ok {
						if _, done := delays[e.Node]; !done {
							delays[e.Node] = at - l
						}
					}
				}
			}
			require.Greater(t, len(delays), 20, "%s seed %d: most members learnt of the rebalance at a heartbeat and rejoined", strategy, seed)
			lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
			for _, d := range delays {
				lo, hi = min(lo, d), max(hi, d)
			}
			t.Logf("%s seed %d: %d members rejoined %v to %v after learning of the rebalance (IQR %v)", strategy, seed, len(delays), lo, hi, iqr)
			assert.GreaterOrEqual(t, hi-lo, iqr, "%s seed %d: the rejoin delays spread over the processing time's IQR", strategy, seed)
		}
	}
	t.Logf("unowned partition-seconds from the fault, 3 seeds: eager %.0f, cooperative %.0f", unowned["range"], unowned["cooperative-sticky"])
	assert.Greater(t, unowned["range"], unowned["cooperative-sticky"], "eager costs more than cooperative")
}
