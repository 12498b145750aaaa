package harness

// Goal: under realistic timing a rate must not depend on
// the instant written in the file. A fault's phase is drawn over the least
// common period of the member's periodic timers (heartbeat 3 s, auto-commit
// 5 s: 15 s), so sweeping faults[0].at over one cycle gives the same
// false-eviction rate, within its interval, at every instant. Before, the
// phase was drawn over one heartbeat interval only, and an 8 s pause at
// session 10 s gave 5.3 % at 90 s and 36.5 % at 93 s (400 seeds each).

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/internal/simtest"
)

func TestFaultPhaseOverTheWholeCycle(t *testing.T) {
	if testing.Short() {
		t.Skip("3,200 runs")
	}
	const seeds = 400
	src := `
name: phase
duration: 130s
timing: realistic
topics:
  - {name: orders, partitions: 12}
groups:
  - id: payments
    members: 6
    subscribe: [orders]
    client:
      profile: kafka-3.x
      session.timeout.ms: 10000
      heartbeat.interval.ms: 3000
faults:
  - {at: %ds, pause: payments-2, for: 8s}
`
	ats := []int{90, 91, 92, 93, 95, 97, 100, 103}
	rates := make([]float64, len(ats))
	pooled := 0.0
	for i, at := range ats {
		sc := simtest.Parse(t, fmt.Sprintf(src, at))
		n := 0
		for seed := uint64(1); seed <= seeds; seed++ {
			res := run(t, sc, seed, Options{})
			if i == 0 && seed == 1 {
				require.Equal(t, []string{"uniform over 15 s (least common period of heartbeat 3 s, auto-commit 5 s)"}, res.Summary.FaultPhaseWindows,
					"the summary says what was drawn")
			}
			if res.Summary.Groups[0].FalseEvictions > 0 {
				n++
			}
		}
		rates[i] = float64(n) / seeds
		pooled += rates[i] / float64(len(ats))
	}
	var line []string
	for i, at := range ats {
		line = append(line, fmt.Sprintf("at %d s: %.1f %%", at, 100*rates[i]))
	}
	t.Logf("false-eviction probability, %d seeds each: %s (pooled %.1f %%)", seeds, strings.Join(line, ", "), 100*pooled)
	require.Greater(t, pooled, 0.02, "the pause does evict on some phases")
	// Each rate within 4 standard errors of the pooled one (binomial).
	se := math.Sqrt(pooled * (1 - pooled) / seeds)
	for i, at := range ats {
		assert.InDelta(t, pooled, rates[i], 4*se, "at %d s: %.3f vs pooled %.3f", at, rates[i], pooled)
	}
}

// A fault's own jitter: names the window (0s: exactly at the written
// instant), and timing: exact draws nothing.
func TestFaultJitterNamesTheWindow(t *testing.T) {
	src := `
name: jitter
duration: 60s
timing: realistic
topics:
  - {name: orders, partitions: 4}
groups:
  - id: g
    members: 2
    subscribe: [orders]
faults:
  - {at: 30s, crash: g-1, jitter: %s}
`
	for _, c := range []struct {
		jitter string
		want   []string
	}{{"7s", []string{"uniform over 7 s (jitter: 7 s written on the fault)"}}, {"0s", []string{"none (jitter: 0 s written on the fault)"}}} {
		sc := simtest.Parse(t, fmt.Sprintf(src, c.jitter))
		seen := map[int64]bool{}
		for seed := uint64(1); seed <= 20; seed++ {
			res := run(t, sc, seed, Options{})
			assert.Equal(t, c.want, res.Summary.FaultPhaseWindows)
			seen[res.Summary.Groups[0].FirstFaultMs] = true
			for at := range seen {
				assert.GreaterOrEqual(t, at, int64(30000))
				assert.Less(t, at, int64(37000))
			}
		}
		if c.jitter == "0s" {
			assert.Equal(t, map[int64]bool{30000: true}, seen)
		} else {
			assert.Greater(t, len(seen), 10)
		}
	}
}
