package harness

import (
	"testing"
	"unsafe"

	"github.com/rebalsim/rebalsim/sim"
	"github.com/stretchr/testify/require"
)

// TestDelTable: every delivery put comes back from take unchanged, indexes
// are the lowest free ones, and once a peak has drained the table keeps at
// most a spare page beyond what is pending (issue 15, memory per member).
func TestDelTable(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(sim.Delivery[envelope]{}), uintptr(96), "256 deliveries fill the 24 KiB size class")
	var tb delTable
	r := sim.NewStreams(3).Stream("deltable")
	type pending struct {
		i    uint32
		corr uint64
	}
	var live []pending
	seen := map[uint32]bool{}
	var corr uint64
	for round := 0; round < 4; round++ {
		peak := 1000 + r.IntN(3000)
		for len(live) < peak { // a rebalance: many in flight at once
			corr++
			i := tb.put(&sim.Delivery[envelope]{Msg: envelope{corr: corr}})
			require.False(t, seen[i], "index %d handed out twice", i)
			seen[i] = true
			live = append(live, pending{i, corr})
		}
		for k := 0; k < 20000; k++ { // the steady state: a few in flight
			if len(live) > 10 || (len(live) > 0 && r.IntN(2) == 0) {
				k := r.IntN(len(live)) // any pending one
				require.Equal(t, live[k].corr, tb.take(live[k].i).Msg.corr)
				delete(seen, live[k].i)
				live = append(live[:k], live[k+1:]...)
				continue
			}
			corr++
			i := tb.put(&sim.Delivery[envelope]{Msg: envelope{corr: corr}})
			require.False(t, seen[i], "index %d handed out twice", i)
			seen[i] = true
			live = append(live, pending{i, corr})
		}
		pages := 0
		for _, p := range tb.pages {
			if p != nil {
				pages++
			}
		}
		require.LessOrEqual(t, pages, 2, "round %d: %d pages kept for %d pending", round, pages, len(live))
	}
	for _, p := range live {
		require.Less(t, p.i, uint32(delPage), "lowest free index first")
	}
}
