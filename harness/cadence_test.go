package harness

// Goal: measure what modelling the Java heartbeat thread's wake-up cadence
// (client.Config.Sim.HeartbeatWakeCadence: act at the first wake-up, every
// retry.backoff.ms, at or after a deadline) changes, at the default
// heartbeat/session settings and at aggressive ones (heartbeat.interval.ms
// 100, session.timeout.ms 1000). Method: the same scenario and seeds with and
// without the cadence; the event counts must match and the unowned
// partition-seconds stay within 3 %. The figures are logged (go test -v).

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rebalsim/rebalsim/internal/simtest"
	"github.com/rebalsim/rebalsim/scenario"
)

func TestHeartbeatWakeCadenceChangesNoFigure(t *testing.T) {
	base := smallCrashWith(t, "kafka-3.7", "kafka-3.7")
	aggressive := strings.Replace(base, "      session.timeout.ms: 10000\n      heartbeat.interval.ms: 3000",
		"      session.timeout.ms: 1000\n      heartbeat.interval.ms: 100", 1)
	aggressive = strings.Replace(aggressive, "  group.initial.rebalance.delay.ms: 1000",
		"  group.initial.rebalance.delay.ms: 1000\n  group.min.session.timeout.ms: 500", 1)
	pause, ok := scenario.Builtin("bug-kafka-13419")
	assert.True(t, ok)
	for _, c := range []struct{ name, src string }{{"default", base}, {"aggressive", aggressive}, {"bug-kafka-13419 (GC pause)", string(pause)}} {
		name := c.name
		sc := simtest.Parse(t, c.src)
		var off, on struct {
			reb, ev, fev, gen int
			unowned           float64
		}
		for seed := uint64(1); seed <= 20; seed++ {
			for i, cadence := range []bool{false, true} {
				g := run(t, sc, seed, Options{ExactHeartbeatDeadlines: !cadence}).Summary.Groups[0]
				acc := &off
				if i == 1 {
					acc = &on
				}
				acc.reb += len(g.Rebalances)
				acc.ev += g.Evictions
				acc.fev += g.FalseEvictions
				acc.gen += int(g.FinalGeneration)
				acc.unowned += g.UnownedPartitionSeconds
			}
		}
		assert.Positive(t, off.reb, "%s: the group formed", name)
		t.Logf("%s, 20 seeds: off rebalances=%d evictions=%d false=%d gens=%d unowned=%.1f; on rebalances=%d evictions=%d false=%d gens=%d unowned=%.1f",
			name, off.reb, off.ev, off.fev, off.gen, off.unowned, on.reb, on.ev, on.fev, on.gen, on.unowned)
		assert.Equal(t, off.reb, on.reb, name)
		assert.Equal(t, off.ev, on.ev, name)
		assert.Equal(t, off.fev, on.fev, name)
		assert.Equal(t, off.gen, on.gen, name)
		assert.Less(t, math.Abs(on.unowned-off.unowned), 0.03*off.unowned, name)
	}
}
