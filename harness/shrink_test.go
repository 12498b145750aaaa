// Shrink: a swarm run's fault timeline reduces to a 1-minimal set of
// explicit faults that still shows the property: keeping the set shows it,
// dropping any one fault does not.
package harness

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

func TestShrinkIsOneMinimal(t *testing.T) {
	sc := load(t, "testdata/swarm.yaml")
	evicted := func(s *Summary) bool { return s.Groups[0].Evictions > 0 }
	shown := 0
	for seed := uint64(1); seed <= 6 && shown < 2; seed++ {
		if !evicted(&run(t, sc, seed, Options{}).Summary) {
			continue
		}
		shown++
		res, err := Shrink(sc, seed, evicted, 0)
		require.NoError(t, err, "seed %d", seed)
		assert.Less(t, len(res.Faults), res.From, "seed %d: something was removed", seed)
		with := func(fs []scenario.Fault) bool {
			c := *sc
			c.Swarm, c.Faults = nil, fs
			return evicted(&run(t, &c, seed, Options{}).Summary)
		}
		assert.True(t, with(res.Faults), "seed %d: the reduced timeline still evicts", seed)
		for i := range res.Faults {
			assert.False(t, with(slices.Delete(slices.Clone(res.Faults), i, i+1)),
				"seed %d: dropping %s must lose the eviction (1-minimal)", seed, scenario.FormatFault(res.Faults[i]))
		}
	}
	require.Positive(t, shown, "some seed of the swarm scenario evicts a member")
}

func TestShrinkRefusesWhenPropertyAbsent(t *testing.T) {
	sc := load(t, "crash-one-member")
	_, err := Shrink(sc, 1, func(s *Summary) bool { return len(s.InvariantViolations) > 0 }, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not show the property")
}
