package harness

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
	"github.com/rebalsim/rebalsim/sim"
)

// TestLognormalPollDrawsAsSim: the poll distribution's lognormal fast path
// (sigma computed once) draws exactly what sim.Lognormal (at least
// MinPollCost) draws, from the same stream: a performance device that
// changes no output.
func TestLognormalPollDrawsAsSim(t *testing.T) {
	for _, d := range []scenario.Dist{scenario.DefaultPollInterval, {Kind: scenario.DistLognormal, Median: 3 * time.Microsecond, P99: time.Hour}} {
		fast := pollDist(d)
		_, ok := fast.(atLeastLognormal)
		require.True(t, ok)
		slow := atLeast{sim.Lognormal{Median: d.Median, P99: d.P99}, MinPollCost}
		r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 100000; i++ {
			require.Equal(t, slow.Draw(r2), fast.Draw(r1), "draw %d", i)
		}
	}
}
