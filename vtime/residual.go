package vtime

import (
	"math/rand/v2"
	"time"
)

// The time left of a step at a random instant. A loop of steps whose
// lengths are drawn from a distribution X (an application's processing
// steps between poll() calls) is caught by an outside event (a shutdown, a
// fault) inside a step with a probability proportional to that step's
// length: the step in progress is length-biased, with density
// x·f(x)/E[X], and the time left of it is a uniform fraction of that
// step. Its mean is E[X²]/2E[X], not the E[X]/2 of a uniform fraction of
// one fresh draw (the renewal-theory "inspection paradox"; for the default
// processing time, lognormal with median 200 ms and p99 2 s, 435 ms
// against 163 ms).

// ResidualDist is a Dist that can draw the time left of one of its steps at
// a random instant (DrawResidual).
type ResidualDist interface {
	Dist
	DrawResidual(r *rand.Rand) time.Duration
}

// DrawResidual draws the time left, at a random instant, of the step in
// progress of a loop whose steps are drawn from d: d's own DrawResidual
// when it has one (vtime.Const and sim's constant, uniform, exponential and
// lognormal distributions do, exactly), else an approximation: the
// length-biased step picked, with probability proportional to its length,
// among residualResample draws of d, then a uniform fraction of it (a
// sampling-importance resampling whose bias shrinks with the number of
// draws; none of the project's distributions takes this path).
func DrawResidual(d Dist, r *rand.Rand) time.Duration {
	if rd, ok := d.(ResidualDist); ok {
		return rd.DrawResidual(r)
	}
	var xs [residualResample]float64
	sum := 0.0
	for i := range xs {
		xs[i] = float64(max(d.Draw(r), 0))
		sum += xs[i]
	}
	if sum <= 0 {
		return 0
	}
	pick, acc := r.Float64()*sum, 0.0
	x := xs[len(xs)-1]
	for _, v := range xs {
		if acc += v; pick < acc {
			x = v
			break
		}
	}
	return time.Duration(r.Float64() * x)
}

// residualResample is how many draws DrawResidual's approximation picks
// the length-biased step from.
const residualResample = 64

// DrawResidual is the time left of a constant step at a random instant:
// uniform over [0, c] (mean c/2 = E[X²]/2E[X]). Unlike Draw it takes one
// draw from r.
func (c Const) DrawResidual(r *rand.Rand) time.Duration {
	return time.Duration(r.Float64() * float64(c))
}
