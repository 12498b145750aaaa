package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rebalsim/rebalsim/vtime"
)

// Dist is a distribution of durations (vtime.Dist, the one the models take).
type Dist = vtime.Dist

// Constant always returns its value (vtime.Const).
type Constant = vtime.Const

// Uniform is uniform on [Min, Max].
type Uniform struct{ Min, Max time.Duration }

func (u Uniform) Draw(r *rand.Rand) time.Duration {
	if u.Max <= u.Min {
		return u.Min
	}
	return u.Min + time.Duration(r.Int64N(int64(u.Max-u.Min)+1))
}
func (u Uniform) String() string { return fmt.Sprintf("uniform(%v, %v)", u.Min, u.Max) }

// Exponential is Min plus an exponential tail, with overall mean Mean
// (so the tail's mean is Mean-Min). This is TigerBeetle's packet-delay shape:
// a floor plus rare long delays.
type Exponential struct{ Min, Mean time.Duration }

func (e Exponential) Draw(r *rand.Rand) time.Duration {
	tail := float64(e.Mean - e.Min)
	if tail <= 0 {
		return e.Min
	}
	return e.Min + time.Duration(r.ExpFloat64()*tail)
}
func (e Exponential) String() string {
	return fmt.Sprintf("exponential(min %v, mean %v)", e.Min, e.Mean)
}

// z99 is the standard normal's 0.99 quantile.
const z99 = 2.3263478740408408

// Lognormal is parameterised by its median and 99th percentile:
// ln X ~ N(ln median, sigma) with sigma = ln(p99/median)/z0.99.
type Lognormal struct{ Median, P99 time.Duration }

func (l Lognormal) Draw(r *rand.Rand) time.Duration {
	if l.P99 <= l.Median || l.Median <= 0 {
		return l.Median
	}
	sigma := math.Log(float64(l.P99)/float64(l.Median)) / z99
	x := float64(l.Median) * math.Exp(sigma*r.NormFloat64())
	if x > float64(math.MaxInt64/2) {
		x = float64(math.MaxInt64 / 2)
	}
	return time.Duration(x)
}
func (l Lognormal) String() string {
	return fmt.Sprintf("lognormal(median %v, p99 %v)", l.Median, l.P99)
}
