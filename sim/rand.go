package sim

import "math/rand/v2"

// Streams derives independent random streams from one run seed. Each stream
// is named ("network", "queue", "member/payments-3", ...); a stream depends
// only on the seed and its name, so adding a member or a draw in one
// subsystem never changes what another subsystem draws.
type Streams struct {
	seed uint64
}

// NewStreams returns the stream factory of a run seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed} }

// Seed is the run seed.
func (s Streams) Seed() uint64 { return s.seed }

// Stream returns a fresh PCG generator for the named stream. Calling it twice
// with one name returns two generators producing the same sequence.
func (s Streams) Stream(name string) *rand.Rand {
	h := fnv1a(name)
	return rand.New(rand.NewPCG(splitmix(s.seed^0x9e3779b97f4a7c15), splitmix(h^s.seed)))
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// splitmix is SplitMix64's finaliser: it spreads nearby seeds far apart.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
