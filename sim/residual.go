package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// DrawResidual for sim's distributions (vtime.DrawResidual, vtime/residual.go):
// the step in progress at a random instant is drawn from the length-biased
// distribution x·f(x)/E[X], exactly (its inverse or its known family), and
// the time left is a uniform fraction of it; the mean is E[X²]/2E[X]
// (TestDrawResidual).

// DrawResidual for Uniform[a, b]: the length-biased step has the CDF
// (x² − a²)/(b² − a²), so x = sqrt(a² + v·(b² − a²)) for v uniform.
func (u Uniform) DrawResidual(r *rand.Rand) time.Duration {
	a, b := float64(max(u.Min, 0)), float64(max(u.Max, 0))
	if b <= a {
		return time.Duration(r.Float64() * a)
	}
	x := math.Sqrt(a*a + r.Float64()*(b*b-a*a))
	return time.Duration(r.Float64() * x)
}

// DrawResidual for Exponential (Min + an exponential tail of mean θ =
// Mean − Min): x·f(x) = Min·f(x) + y·f(x), so the length-biased step is
// Min + Exp(θ) with probability Min/Mean, else Min + Gamma(2, θ) (the sum of
// two exponential draws).
func (e Exponential) DrawResidual(r *rand.Rand) time.Duration {
	m, tail := float64(max(e.Min, 0)), float64(e.Mean-e.Min)
	if tail <= 0 {
		return time.Duration(r.Float64() * m)
	}
	y := r.ExpFloat64()
	if r.Float64()*(m+tail) >= m {
		y += r.ExpFloat64()
	}
	return time.Duration(r.Float64() * (m + y*tail))
}

// DrawResidual for Lognormal: the length-biased lognormal(μ, σ) is
// lognormal(μ + σ², σ), so the step in progress is median·exp(σ² + σz).
func (l Lognormal) DrawResidual(r *rand.Rand) time.Duration {
	if l.P99 <= l.Median || l.Median <= 0 {
		return time.Duration(r.Float64() * float64(max(l.Median, 0)))
	}
	sigma := math.Log(float64(l.P99)/float64(l.Median)) / z99
	x := float64(l.Median) * math.Exp(sigma*sigma+sigma*r.NormFloat64())
	if x > float64(math.MaxInt64/2) {
		x = float64(math.MaxInt64 / 2)
	}
	return time.Duration(r.Float64() * x)
}
