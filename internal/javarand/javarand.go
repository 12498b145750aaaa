// Package javarand is java.util.Random, and the testbed driver's workload
// distributions drawn from it (realkafka/java/Driver.java, Dist.draw), so
// that a matched simulation can replay a real member's own workload draws
// from its driver seed (meta.json driver_seeds).
//
// The algorithms are the ones the JDK 17 javadoc of java.util.Random
// specifies (and its implementation follows): a 48-bit linear congruential
// generator (Knuth, TAOCP vol. 2 §3.2.1) with multiplier 0x5DEECE66D and
// addend 0xB, seeded by scrambling the seed with the multiplier
// (Random(long), setSeed), next(bits) the top bits of the new state,
// nextDouble from 26 + 27 bits, and nextGaussian the polar method of
// G. E. P. Box, M. E. Muller and G. Marsaglia, which caches the pair's
// second value for the next call. The expected values in the tests were
// computed by OpenJDK 17.0.15.
package javarand

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

const (
	multiplier = 0x5DEECE66D
	addend     = 0xB
	mask       = 1<<48 - 1
)

// Random is java.util.Random: not safe for concurrent use (the model is
// single-threaded; Java's is, by an AtomicLong and synchronized
// nextGaussian).
type Random struct {
	seed uint64 // the 48-bit state
	// nextNextGaussian is nextGaussian's cached second value, valid while
	// haveNextNextGaussian.
	nextNextGaussian     float64
	haveNextNextGaussian bool
}

// New is new Random(seed): the seed scrambled as setSeed does,
// (seed ^ 0x5DEECE66D) & ((1L << 48) - 1).
func New(seed int64) *Random {
	return &Random{seed: (uint64(seed) ^ multiplier) & mask}
}

// Next is Random.next(bits) (1 ≤ bits ≤ 32): the state advances to
// (seed * 0x5DEECE66D + 0xB) & ((1L << 48) - 1) and its top bits are
// returned, (int)(seed >>> (48 - bits)).
func (r *Random) Next(bits uint) int32 {
	r.seed = (r.seed*multiplier + addend) & mask
	return int32(r.seed >> (48 - bits))
}

// NextDouble is Random.nextDouble: (((long)next(26) << 27) + next(27)) *
// 0x1.0p-53, uniform on [0, 1).
func (r *Random) NextDouble() float64 {
	hi := int64(r.Next(26))
	lo := int64(r.Next(27))
	return float64(hi<<27+lo) * 0x1.0p-53
}

// NextGaussian is Random.nextGaussian: the polar method, two nextDouble
// per try until 0 < s < 1, the first value returned and the second cached
// for the next call.
func (r *Random) NextGaussian() float64 {
	if r.haveNextNextGaussian {
		r.haveNextNextGaussian = false
		return r.nextNextGaussian
	}
	var v1, v2, s float64
	for {
		v1 = 2*r.NextDouble() - 1 // between -1 and 1
		v2 = 2*r.NextDouble() - 1
		s = v1*v1 + v2*v2
		if s < 1 && s != 0 {
			break
		}
	}
	// StrictMath.sqrt(-2 * StrictMath.log(s) / s): Go's math.Log and
	// Java's StrictMath.log (fdlibm) agree on the tested values
	// (TestNextGaussian); sqrt is correctly rounded in both.
	multiplier := math.Sqrt(-2 * math.Log(s) / s)
	r.nextNextGaussian = v2 * multiplier
	r.haveNextNextGaussian = true
	return v1 * multiplier
}

// Dist is the driver's Dist (realkafka/java/Driver.java): a kind and two
// parameters in milliseconds, as realkafka.distSpec writes them
// ("lognormal:200:2000").
type Dist struct {
	Kind string // constant, uniform, exponential or lognormal
	A, B float64
}

// ParseDist is the driver's Dist(String spec): "kind[:a[:b]]", a missing
// parameter 0. Unlike Driver.Dist, an unknown kind or a malformed number is
// an error here, not at the first draw.
func ParseDist(spec string) (Dist, error) {
	f := strings.Split(spec, ":")
	d := Dist{Kind: f[0]}
	switch d.Kind {
	case "constant", "uniform", "exponential", "lognormal":
	default:
		return Dist{}, fmt.Errorf("javarand: unknown distribution %q in %q", d.Kind, spec)
	}
	for i, p := range []*float64{&d.A, &d.B} {
		if len(f) > i+1 {
			v, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return Dist{}, fmt.Errorf("javarand: distribution %q: %w", spec, err)
			}
			*p = v
		}
	}
	return d, nil
}

// Constant reports whether a draw takes nothing from the generator.
func (d Dist) Constant() bool { return d.Kind == "constant" }

// lognormalZ99 is the driver's 2.3263478740408408, the standard normal's
// 0.99 quantile.
const lognormalZ99 = 2.3263478740408408

// Draw is Driver.Dist.draw: a value in milliseconds, each kind's double
// truncated toward zero by Java's (long) cast:
//
//	constant:    (long) a                                   (no draw)
//	uniform:     (long) (a + r.nextDouble() * (b - a))
//	exponential: (long) (a - b * Math.log(1 - r.nextDouble()))
//	lognormal:   (long) (a * Math.exp(sigma * r.nextGaussian())),
//	             sigma = ln(b/a) / 2.3263478740408408 if b > a > 0, else 0
//
// (a lognormal is median a, 99th percentile b). An unknown kind draws
// nothing and is 0 (ParseDist refuses one).
func (d Dist) Draw(r *Random) int64 {
	switch d.Kind {
	case "constant":
		return javaLong(d.A)
	case "uniform":
		return javaLong(d.A + r.NextDouble()*(d.B-d.A))
	case "exponential":
		return javaLong(d.A - d.B*math.Log(1-r.NextDouble()))
	case "lognormal":
		sigma := 0.0
		if d.B > d.A && d.A > 0 {
			sigma = math.Log(d.B/d.A) / lognormalZ99
		}
		return javaLong(d.A * math.Exp(sigma*r.NextGaussian()))
	}
	return 0
}

// javaLong is Java's (long) cast of a double (JLS §5.1.3): toward zero,
// NaN 0, and saturating at Long.MIN_VALUE / Long.MAX_VALUE (Go's
// conversion of an out-of-range float is implementation-defined).
func javaLong(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}
