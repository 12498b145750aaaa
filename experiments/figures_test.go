// Goal: the per-run figures computed by hand from a summary: an incomplete
// rebalance (still open at the end of the run, harness.Rebalance.Incomplete)
// is counted but kept out of every duration and out of recovery, as the
// harness keeps it out of rebalance_duration_ms; the fault-relative figures
// use the summary's first fault of any kind (first_fault_ms), so a swarm or
// rolling fault that is not in the scenario's faults list counts (else a
// sweep ignores swarm faults).
package experiments

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

func TestFiguresByHand(t *testing.T) {
	fault := []scenario.Fault{{At: 30 * time.Second}}
	swarm := []scenario.Fault{} // the harness drew the fault; only first_fault_ms knows
	startup := harness.Rebalance{StartMs: 0, EndMs: 3000, DurationMs: 3000}
	crash := harness.Rebalance{StartMs: 39000, EndMs: 41000, DurationMs: 2000}
	later := harness.Rebalance{StartMs: 50000, EndMs: 51000, DurationMs: 1000}
	open := harness.Rebalance{StartMs: 40000, EndMs: 90000, DurationMs: 50000, Incomplete: true}
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		faults []scenario.Fault
		rebs   []harness.Rebalance
		// count, incomplete, mean, max, recovery, fault rebalance, after fault
		want [7]float64
	}{
		{"no faults", nil, []harness.Rebalance{startup}, [7]float64{1, 0, 3000, 3000, nan, nan, nan}},
		{"crash then a later rebalance", fault, []harness.Rebalance{startup, crash, later}, [7]float64{3, 0, 2000, 3000, 11000, 2000, 2}},
		{"fault, rebalance never ends", fault, []harness.Rebalance{startup, open}, [7]float64{2, 1, 3000, 3000, nan, nan, 1}},
		{"fault, no rebalance after it", fault, []harness.Rebalance{startup}, [7]float64{1, 0, 3000, 3000, nan, nan, 0}},
		{"only an incomplete rebalance", nil, []harness.Rebalance{open}, [7]float64{1, 1, nan, nan, nan, nan, nan}},
		{"swarm fault (not in faults:)", swarm, []harness.Rebalance{startup, crash, later}, [7]float64{3, 0, 2000, 3000, 11000, 2000, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario.Scenario{Faults: tc.faults}
			first := int64(-1)
			if tc.faults != nil {
				first = 30000
			}
			s := &harness.Summary{Groups: []harness.GroupSummary{{Rebalances: tc.rebs, MemberHours: 0.5, FalseEvictions: 2, FirstFaultMs: first}}}
			v := figures(sc, s)
			got := [7]float64{
				v[figureIndex("rebalance_count")], v[figureIndex("incomplete_rebalances")],
				v[figureIndex("rebalance_duration_ms_mean")], v[figureIndex("rebalance_duration_ms_max")],
				v[figureIndex("recovery_ms")], v[figureIndex("fault_rebalance_ms")], v[figureIndex("rebalances_after_fault")],
			}
			for i := range got {
				if math.IsNaN(tc.want[i]) {
					assert.True(t, math.IsNaN(got[i]), "figure %d: want empty, got %v", i, got[i])
				} else {
					assert.Equal(t, tc.want[i], got[i], "figure %d", i)
				}
			}
			assert.Equal(t, 4.0, v[figureIndex("false_evictions_per_member_hour")])
		})
	}
}
