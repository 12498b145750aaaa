package scenario

import (
	"slices"
	"testing"

	"github.com/rebalsim/rebalsim/model/assign"
	"github.com/stretchr/testify/assert"
)

// TestAssignorNamesMatchModel: every strategy the file accepts has an
// assignor in model/assign, and the other way round.
func TestAssignorNamesMatchModel(t *testing.T) {
	var names []string
	for _, a := range assignorNames {
		names = append(names, a.name)
		_, ok := assign.ByName(a.name)
		assert.True(t, ok, a.name)
	}
	slices.Sort(names)
	assert.Equal(t, assign.Names(), names)
}
