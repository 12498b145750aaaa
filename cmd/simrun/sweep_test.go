// Goal: the sweep, merge, report and list commands work end to end on the
// quickstart experiment with the real harness, and bad input exits 2.
package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSweepMergeReportCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	whole := filepath.Join(dir, "whole")
	require.Equal(t, exitOK, dispatch([]string{"sweep", "quickstart", "--out", whole, "--workers", "2"}, &out, &errb), errb.String())
	s0, s1 := filepath.Join(dir, "s0"), filepath.Join(dir, "s1")
	require.Equal(t, exitOK, dispatch([]string{"sweep", "quickstart", "--out", s0, "--shard", "0/2"}, &out, &errb), errb.String())
	require.Equal(t, exitOK, dispatch([]string{"sweep", "quickstart", "--out", s1, "--shard", "1/2"}, &out, &errb), errb.String())
	merged := filepath.Join(dir, "merged")
	require.Equal(t, exitOK, dispatch([]string{"merge", s0, s1, "--out", merged}, &out, &errb), errb.String())
	for _, f := range []string{"points.csv", "summary.csv", "recovery.png", "recovery.svg", "unowned.png"} {
		a, err := os.ReadFile(filepath.Join(whole, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(merged, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), f)
	}
	require.Equal(t, exitOK, dispatch([]string{"report", "quickstart", "--out", whole}, &out, &errb), errb.String())
	md, err := os.ReadFile(filepath.Join(whole, "REPORT.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "scenarios/p0000.yaml --seed 1")
	// The cited scenario file runs.
	require.Equal(t, exitOK, dispatch([]string{"run", filepath.Join(whole, "scenarios", "p0001.yaml"), "--seed", "3"}, &out, &errb), errb.String())
}

func TestSweepBadInput(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitBadInput, dispatch([]string{"sweep", "no-such-experiment"}, &out, &errb))
	assert.Contains(t, errb.String(), "no such built-in experiment")
	assert.Equal(t, exitBadInput, dispatch([]string{"sweep", "quickstart", "--shard", "3/2", "--out", t.TempDir()}, &out, &errb))
	assert.Equal(t, exitBadInput, dispatch([]string{"merge", "--out", t.TempDir()}, &out, &errb))
	assert.Equal(t, exitBadInput, dispatch([]string{"merge", t.TempDir(), "--out", t.TempDir()}, &out, &errb))
}

func TestListShowsExperiments(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, dispatch([]string{"list"}, &out, &errb))
	assert.Contains(t, out.String(), "Built-in experiments")
	assert.Contains(t, out.String(), "quickstart")
	assert.Contains(t, out.String(), "crash-recovery")
}

// TestDefaultOutputOutsideResults: sweep and tune write under
// ./rebalsim-out/ unless --out says otherwise, never into a checkout's
// committed results/ (a trial sweep must not overwrite the committed
// figures); report regenerates results/NAME/.
func TestDefaultOutputOutsideResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(t.TempDir()))
	defer os.Chdir(wd)
	code, _, errs := run("sweep", "quickstart", "--set", "duration=60s")
	require.Equal(t, exitOK, code, errs)
	_, err = os.Stat(filepath.Join(OutRoot, "quickstart", "summary.csv"))
	assert.NoError(t, err)
	_, err = os.Stat("results")
	assert.True(t, os.IsNotExist(err), "sweep wrote nothing under results/")
	code, _, errs = run("tune", "gc-pause", "--param", "groups[0].client.session.timeout.ms=20000..20000", "--require", "false_evictions <= 2", "--seeds", "2")
	require.Equal(t, exitOK, code, errs)
	_, err = os.Stat(filepath.Join(OutRoot, "tune-gc-pause", "tune.csv"))
	assert.NoError(t, err)
}
