package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExploreCommand: a campaign that finds the KAFKA-8653 storm exits 1,
// prints one FINDING line with its reproduction and writes the finding's
// files; the written scenario reproduces the run (simrun run exits 0: the
// oracles do not change run's exit status); bad input exits 2.
func TestExploreCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run("explore", "bug-kafka-8653", "--swarm", "default", "--file-faults=false", "--set", "duration=600s",
		"--seeds", "2", "--workers", "1", "--oracle", "rebalance-storm", "--out", dir)
	require.Equal(t, exitViolation, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "FINDING rebalance-storm--")
	assert.Contains(t, out, "reproduce: simrun run "+dir)
	matches, err := filepath.Glob(filepath.Join(dir, "rebalance-storm--*", "scenario.yaml"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	for _, f := range []string{"explain.txt", "timeline.png"} {
		_, err := os.Stat(filepath.Join(filepath.Dir(matches[0]), f))
		assert.NoError(t, err, f)
	}
	_, err = os.Stat(filepath.Join(dir, "findings.json"))
	assert.NoError(t, err)
	code, _, errOut = run("run", matches[0], "--seed", "1")
	assert.NotEqual(t, exitBadInput, code, errOut)

	code, _, errOut = run("explore", "crash-one-member", "--seeds", "1")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "no swarm: block")
	code, _, errOut = run("explore", "crash-one-member", "--swarm", "default", "--seeds", "1")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "too short")
	code, _, _ = run("explore", "crash-one-member", "--swarm", "default", "--set", "duration=900s", "--without", "meteor", "--seeds", "1")
	assert.Equal(t, exitBadInput, code)
}
