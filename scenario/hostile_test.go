package scenario

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile and careless input (issue 17): every input here was found to
// hang, panic or be silently altered before. The files live in
// testdata/hostile/, which also seeds the whole-path fuzz target.

// TestMergeKeyBombIsBounded: 40 levels of doubling "<<:" merges took hours
// to read (2^40 visits); now the expansion is counted and bounded.
func TestMergeKeyBombIsBounded(t *testing.T) {
	b, err := os.ReadFile("testdata/hostile/merge-bomb.yaml")
	require.NoError(t, err)
	start := time.Now()
	_, err = Parse("bomb.yaml", b)
	require.Error(t, err)
	assert.ErrorContains(t, err, "expand to more than 200000 YAML nodes")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Positive(t, e.Line)
	assert.Less(t, time.Since(start), 5*time.Second)
}
