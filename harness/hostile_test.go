package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// Hostile and careless input to runs (issue 17).

func mustParse(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("t.yaml", []byte(src))
	require.NoError(t, err)
	return sc
}

// TestStableAtEndNeedsEveryLiveMember (item 5): g-2 starts at 30 s cut off
// from the coordinator and never joins; the coordinator's group is Stable
// with the other two, which INTERFACE.md does not call stable at end.
func TestStableAtEndNeedsEveryLiveMember(t *testing.T) {
	sc := mustParse(t, `name: never-joined
duration: 60s
topics: [{name: orders, partitions: 4}]
groups:
  - {id: g, members: 2, subscribe: [orders]}
  - {id: g, members: 1, subscribe: [orders], start: {at: 30s}}
faults:
  - {at: 20s, partition: [g-2, coordinator], for: 100s}
`)
	res, err := Run(sc, 1, Options{})
	require.NoError(t, err)
	g := res.Summary.Groups[0]
	assert.Equal(t, 2, g.Rebalances[len(g.Rebalances)-1].Members, "the group settled without g-2")
	assert.False(t, g.StableAtEnd, "g-2 is alive and never joined")

	sc.Faults = nil // the same group where g-2 joins: stable at end
	res, err = Run(sc, 1, Options{})
	require.NoError(t, err)
	assert.True(t, res.Summary.Groups[0].StableAtEnd)
}
