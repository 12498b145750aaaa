package harness

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/classic/client"
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

// TestInlineLognormalDrawsAsDist: the client's lazy poll replay draws the
// default poll.interval inline (client.LognormalDraw, with the parameters
// atLeastLognormal.Lognormal gives it) instead of calling Draw per poll:
// the same values, to the bit, from the same stream.
func TestInlineLognormalDrawsAsDist(t *testing.T) {
	for _, d := range []scenario.Dist{scenario.DefaultPollInterval, {Kind: scenario.DistLognormal, Median: 3 * time.Microsecond, P99: time.Hour}} {
		a, ok := pollDist(d).(atLeastLognormal)
		require.True(t, ok)
		median, sigma, least := a.Lognormal()
		r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
		for i := 0; i < 100000; i++ {
			require.Equal(t, a.Draw(r1), client.LognormalDraw(median, sigma, least, r2), "draw %d", i)
		}
	}
}
