package experiments

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// The bootstrap behind KindDuration (interval.go holds every interval
// kind; this file the resampling).

// BootstrapResamples is the number of bootstrap resamples.
const BootstrapResamples = 2000

// BootstrapMean is the 95 % percentile-bootstrap interval of the mean of xs,
// drawn from a random stream seeded by seed (so the interval is the same
// on every machine). NaN bounds for fewer than 2 values.
func BootstrapMean(xs []float64, seed uint64) (mean, lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	mean = stat.Mean(xs, nil)
	if len(xs) < 2 {
		return mean, math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x626f6f74)) // "boot"
	means := make([]float64, BootstrapResamples)
	n := len(xs)
	for b := range means {
		sum := 0.0
		for range n {
			sum += xs[rng.IntN(n)]
		}
		means[b] = sum / float64(n)
	}
	slices.Sort(means)
	lo = stat.Quantile(0.025, stat.Empirical, means, nil)
	hi = stat.Quantile(0.975, stat.Empirical, means, nil)
	return mean, lo, hi
}

// StreamSeed derives a bootstrap seed from names, so every interval has
// its own fixed stream.
func StreamSeed(names ...string) uint64 {
	h := fnv.New64a()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// valuesSeed derives a bootstrap seed from the values themselves (in
// order), for callers that have no names: the same data give the same
// interval.
func valuesSeed(xs []float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	return h.Sum64()
}
