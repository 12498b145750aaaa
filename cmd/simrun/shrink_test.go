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

// TestShrinkUntilOracle: shrink keeps an oracle's finding (KAFKA-13419's
// dropped member id: the pause and the join both matter), and its
// reproduce line fails the run with that oracle.
func TestShrinkUntilOracle(t *testing.T) {
	out := filepath.Join(t.TempDir(), "min.yaml")
	code, _, errOut := run("shrink", "bug-kafka-13419", "--until", "abandoned-member-id", "--out", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, `still show "abandoned-member-id"`)
	assert.Contains(t, errOut, "--fail-on abandoned-member-id")
	code, stdout, errOut := run("run", out, "--fail-on", "abandoned-member-id")
	assert.Equal(t, exitFailOn, code, errOut)
	assert.Contains(t, stdout, "FIRED abandoned-member-id")
	code, stdout, _ = run("explain", out, "--oracles", "abandoned-member-id")
	assert.Equal(t, 0, code)
	assert.Regexp(t, "^oracles: 1 judged, 1 fired", stdout)
	code, _, errOut = run("shrink", "bug-kafka-13419", "--until", "abandoned-member-ib")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, `did you mean abandoned-member-id?`)
}
