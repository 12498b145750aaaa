package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/scenario"
)

// TestShrinkCommand: `simrun shrink` writes a scenario file that parses,
// has only explicit faults (no swarm), and reproduces the property.
func TestShrinkCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "min.yaml")
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"shrink", "../../harness/testdata/swarm.yaml", "--seed", "3", "--until", "evictions", "--out", out}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stderr.String(), "reproduce with: simrun run")
	sc, err := scenario.Load(out)
	require.NoError(t, err)
	assert.Nil(t, sc.Swarm)
	assert.NotEmpty(t, sc.Faults)

	stdout.Reset()
	require.Equal(t, exitOK, dispatch([]string{"run", out, "--seed", "3", "--json"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), `"evictions": 1`)

	assert.Equal(t, exitBadInput, dispatch([]string{"shrink", "crash-one-member", "--until", "nonsense"}, &stdout, &stderr))
}
