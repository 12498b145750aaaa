package harness

import (
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/sim"
	"github.com/rebalsim/rebalsim/vtime"
)

// DrawResidual for the poll distributions (pollDist): the time left of a
// processing step at a random instant (vtime.DrawResidual) is that of the
// distribution under the MinPollCost floor; the floor (1 µs) moves its mean
// by less than a microsecond.

func (a atLeast) DrawResidual(r *rand.Rand) time.Duration { return vtime.DrawResidual(a.d, r) }

func (a atLeastConst) DrawResidual(r *rand.Rand) time.Duration {
	return vtime.Const(a.v).DrawResidual(r)
}

func (a atLeastLognormal) DrawResidual(r *rand.Rand) time.Duration { return a.l.DrawResidual(r) }

var (
	_ vtime.ResidualDist = atLeast{}
	_ vtime.ResidualDist = atLeastConst{}
	_ vtime.ResidualDist = atLeastLognormal{}
	_ vtime.ResidualDist = sim.Uniform{}
	_ vtime.ResidualDist = sim.Exponential{}
	_ vtime.ResidualDist = sim.Lognormal{}
	_ vtime.ResidualDist = sim.Constant(0)
)
