package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExploreCommand: a campaign that finds the KAFKA-8653 storm exits 1,
// prints one FINDING line with its reproduction and writes the finding's
// files, named (known bug: KAFKA-8653); the finding's reproduce line shows
// the oracle and exits 4; explore re-judges the finding's own scenario for
// one seed; a scenario too short for the generic mix is extended, and says
// so; bad input exits 2.
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
	assert.Contains(t, out, "known bug: KAFKA-8653")
	head, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	assert.Contains(t, string(head), "# known bug: KAFKA-8653")
	explain, err := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), "explain.txt"))
	require.NoError(t, err)
	assert.Regexp(t, "^known bug: KAFKA-8653", string(explain))

	// The reproduce line, as written, fails with the oracle.
	var repro []string
	for _, l := range strings.Split(out, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "reproduce: simrun "); ok {
			repro = strings.Fields(r)
			break
		}
	}
	require.NotEmpty(t, repro)
	require.Contains(t, repro, "--fail-on")
	code, rout, rerr := run(repro...)
	assert.Contains(t, []int{exitFailOn, exitViolation}, code, "%s\n%s", rout, rerr) // the storm may also break liveness
	assert.Contains(t, rout, "FIRED rebalance-storm")
	assert.Contains(t, rerr, "fail-on: rebalance-storm fired")
	// Re-judged by explore: the finding's faults, one seed.
	seed := repro[slices.Index(repro, "--seed")+1]
	code, eout, eerr := run("explore", matches[0], "--first-seed", seed, "--seeds", "1", "--workers", "1", "--oracle", "rebalance-storm")
	assert.Equal(t, exitViolation, code, "%s\n%s", eout, eerr)
	assert.Contains(t, eerr, "judging its own faults")
	assert.Contains(t, eout, "FINDING rebalance-storm--")

	code, _, errOut = run("explore", "crash-one-member", "--seeds", "1")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "no swarm: block")
	assert.Contains(t, errOut, "--swarm none")
	code, _, errOut = run("explore", "crash-one-member", "--swarm", "none", "--seeds", "1", "--workers", "1")
	assert.Equal(t, 0, code, errOut)
	code, _, errOut = run("explore", "crash-one-member", "--swarm", "default", "--seeds", "1", "--workers", "1")
	assert.NotEqual(t, exitBadInput, code, errOut)
	assert.Contains(t, errOut, "duration extended from 180 s to 480 s")
	code, _, _ = run("explore", "crash-one-member", "--swarm", "default", "--set", "duration=900s", "--without", "meteor", "--seeds", "1")
	assert.Equal(t, exitBadInput, code)
}
