package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// Hostile and careless input to sweeps: each case once crashed, hung or
// was silently altered.

const tinyGrid = `name: %s
scenario:
  name: tiny
  topics: [{name: t, partitions: 4}]
  groups: [{id: g, members: 3, subscribe: [t]}]
seeds: 2
sweep:
  groups[0].client.session.timeout.ms: [6000, 10000]
plots:
  - %s
`

func tinyExperiment(t *testing.T, name, plot string) *Experiment {
	t.Helper()
	e, err := Parse("x.yaml", []byte(strings.NewReplacer("%s", "").Replace(
		strings.Replace(strings.Replace(tinyGrid, "%s", name, 1), "%s", plot, 1))))
	require.NoError(t, err)
	return e
}

// TestLogAxisWithZeroStillDraws: a log-scale plot of a
// figure that is 0 in every run panicked in the plot goroutine after every
// run; then it was an error after the sweep. Now the log axis skips what is
// not above 0 and, with nothing above 0, falls back to a linear axis: the
// sweep completes and the plot is written.
func TestLogAxisWithZeroStillDraws(t *testing.T) {
	dir := t.TempDir()
	e := tinyExperiment(t, "logz", "{kind: line, x: session_timeout_ms, y: double_owned_partition_seconds, log_y: true, file: a}")
	out, err := Sweep(context.Background(), e, Options{Out: dir, Workers: 1, Runner: fakeRunner})
	require.NoError(t, err)
	assert.Equal(t, 4, out.Ran)
	assert.True(t, out.Complete)
	_, err = os.Stat(filepath.Join(dir, "a.png"))
	assert.NoError(t, err)

	// A log axis over a swept value of 0 is refused before any run.
	_, err = Parse("x.yaml", []byte("name: x\nscenario: crash-one-member\nseeds: 1\nsweep:\n  network.loss: [0, 0.01]\nplots:\n  - {kind: line, x: network_loss, y: evictions, log_x: true}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `x.yaml:7: plots[0]: log_x: network_loss has the value "0", which a log axis cannot show`)
}

// TestPanicKeepsOtherFinishedPoints (item 12): with 2 workers, a panic in
// one point used to discard another point that finished after it.
func TestPanicKeepsOtherFinishedPoints(t *testing.T) {
	dir := t.TempDir()
	e := tinyExperiment(t, "pan", "{kind: line, x: session_timeout_ms, y: evictions}")
	var panicked sync.Once
	signal := make(chan struct{})
	run := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
		if sc.Groups[0].Client.SessionTimeout == 10*time.Second {
			panicked.Do(func() { close(signal) })
			panic("boom")
		}
		if seed == 2 {
			<-signal // finish after the other point's panic
			time.Sleep(50 * time.Millisecond)
		}
		return fakeRunner(sc, seed)
	}
	_, err := Sweep(context.Background(), e, Options{Out: dir, Workers: 2, Runner: run})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panic: boom")
	_, ok := e.readPoint(dir, e.Points()[0])
	assert.True(t, ok, "the point that finished after the panic is on disk")
}

// TestMaxRuns (items 8, 11): a grid of too many runs is refused before any
// run, with the flag that raises the bound.
func TestMaxRuns(t *testing.T) {
	e := tinyExperiment(t, "big", "{kind: line, x: session_timeout_ms, y: evictions}")
	_, err := Sweep(context.Background(), e, Options{Out: t.TempDir(), Runner: fakeRunner, MaxRuns: 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 points × 2 seeds = 4 runs, more than the limit of 3 runs; raise it with --max-runs 4")
	e, err = Parse("x.yaml", []byte("name: x\nscenario: crash-one-member\nseeds: 100000\nsweep:\n  network.loss: [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.01, 0.011]\n"))
	require.NoError(t, err)
	_, err = Sweep(context.Background(), e, Options{Out: t.TempDir(), Runner: fakeRunner})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "= 1200000 runs, more than the limit of 1000000 runs")
}

// TestOutOfAnotherExperimentRefused (item 12): reusing another experiment's
// --out left its old plots beside the new results.
func TestOutOfAnotherExperimentRefused(t *testing.T) {
	dir := t.TempDir()
	a := tinyExperiment(t, "first", "{kind: line, x: session_timeout_ms, y: evictions, file: old-plot}")
	_, err := Sweep(context.Background(), a, Options{Out: dir, Workers: 1, Runner: fakeRunner})
	require.NoError(t, err)
	b := tinyExperiment(t, "second", "{kind: line, x: session_timeout_ms, y: evictions, file: new-plot}")
	_, err = Sweep(context.Background(), b, Options{Out: dir, Workers: 1, Runner: fakeRunner})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `holds the results of experiment "first", not "second"`)
	_, err = os.Stat(filepath.Join(dir, "new-plot.png"))
	assert.True(t, os.IsNotExist(err))
}

// TestMergeOtherVersionSaysSo (item 10): a shard written by another
// simulator version said "run the missing shards".
func TestMergeOtherVersionSaysSo(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	e := tinyExperiment(t, "mv", "{kind: line, x: session_timeout_ms, y: evictions}")
	_, err := Sweep(context.Background(), e, Options{Out: a, Workers: 1, Runner: fakeRunner, Shard: Shard{0, 2}})
	require.NoError(t, err)
	_, err = Sweep(context.Background(), e, Options{Out: b, Workers: 1, Runner: fakeRunner, Shard: Shard{1, 2}})
	require.NoError(t, err)
	p := pointPath(b, e.Points()[1])
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), "# key=", "# key=0", 1)), 0o644))
	_, err = Merge([]string{a, b}, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was written by another simrun version")
}

// TestExperimentMessages (item 10): name: [a, b] said "name: required"; a
// scenario path to a file that is not a scenario printed the file.
func TestExperimentMessages(t *testing.T) {
	_, err := Parse("x.yaml", []byte("name: [a, b]\nscenario: crash-one-member\nseeds: 1\n"))
	require.Error(t, err)
	assert.Equal(t, "x.yaml:1: name: must be a string, got a list", err.Error())

	dir := t.TempDir()
	secret := filepath.Join(dir, "passwd")
	require.NoError(t, os.WriteFile(secret, []byte("root:x:0:0:root:/root:/bin/bash\nsecret-line\n"), 0o600))
	ep := filepath.Join(dir, "sub", "e.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(ep), 0o755))
	require.NoError(t, os.WriteFile(ep, []byte("name: x\nscenario: ../passwd\nseeds: 1\n"), 0o644))
	_, err = Load(ep)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "root:x")
	assert.Contains(t, err.Error(), "is not one (is it the file you meant?)")

	_, err = Parse("x.yaml", []byte("name: x\nscenario: crash-one-member\nseeds: 1\nsweep: {\n  network.loss: [0, 0.01]\n\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.yaml:4: invalid YAML: the { opened here is never closed")
}

// TestInlineMergeBombAndSizeLimit (items 2, 8): the YAML merge-key bomb
// inlined in an experiment hung sweep; /dev/zero as an experiment read
// until out of memory.
func TestInlineMergeBombAndSizeLimit(t *testing.T) {
	bomb, err := os.ReadFile("../scenario/testdata/hostile/merge-bomb.yaml")
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("name: bomb\nseeds: 1\nscenario:\n")
	for _, l := range strings.Split(strings.TrimSpace(string(bomb)), "\n") {
		b.WriteString("  " + l + "\n")
	}
	start := time.Now()
	_, err = Parse("x.yaml", []byte(b.String()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expand to more than 200000 YAML nodes")
	assert.Less(t, time.Since(start), 5*time.Second)

	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err = Load("/dev/zero")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "larger than 4 MiB")
	}
}

// TestCommittedResultsRegenerate: a clone of the repository has results/NAME
// without the sweep's state (.sweep/ is not committed), and the documented
// `simrun report NAME --out results/NAME` must regenerate it in place: a
// directory whose effective_config.jsonl is a sweep's is simrun's. A
// foreign summary.csv beside nothing of simrun's is still refused.
func TestCommittedResultsRegenerate(t *testing.T) {
	dir := t.TempDir()
	e := tinyExperiment(t, "first", "{kind: line, x: session_timeout_ms, y: evictions, file: p}")
	_, err := Sweep(context.Background(), e, Options{Out: dir, Workers: 1, Runner: fakeRunner})
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, sweepDir)))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, ".points")))
	_, err = Sweep(context.Background(), e, Options{Out: dir, Workers: 1, Runner: fakeRunner})
	assert.NoError(t, err, "a committed result directory regenerates in place")

	foreign := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "summary.csv"), []byte("mine\n"), 0o644))
	_, err = Sweep(context.Background(), e, Options{Out: foreign, Workers: 1, Runner: fakeRunner})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds no simrun sweep")
}
