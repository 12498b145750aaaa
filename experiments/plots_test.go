package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestBuiltinPlotsFit renders every plot of every built-in experiment (on
// the fake runner's numbers: the layout, not the data, is under test) and
// checks that every title, axis label and colour-bar label fits its room
// at a readable size, legends stay narrow, and x tick labels do not overlap
// (a y-label cut at both ends and legends taking half the width were
// found in the committed figures).
// PLOTS_DIR=/some/dir keeps the PNGs for a look.
func TestBuiltinPlotsFit(t *testing.T) {
	keep := os.Getenv("PLOTS_DIR")
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			data, _ := Builtin(name)
			e, err := Parse("builtin:"+name, data)
			require.NoError(t, err)
			e.Seeds = 3
			dir := t.TempDir()
			sweep(t, e, Options{Out: dir, Workers: 2})
			r, err := LoadResults(e, dir)
			require.NoError(t, err)
			for i := range e.Plots {
				p := &e.Plots[i]
				fig, err := r.figure(p)
				if err != nil {
					// The fake runner has no value for some figures
					// (e.g. failovers): then the plot must refuse, not
					// draw an empty frame.
					assert.Contains(t, err.Error(), "nothing to draw", p.File)
					continue
				}
				assert.Empty(t, report.Problems(fig), "%s: %s", name, p.File)
				if keep != "" {
					b, err := report.Render(fig, "png")
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(keep, name+"-"+p.File+".png"), b, 0o644))
				}
			}
		})
	}
}

// TestPlotTexts: units on axes and legends (custom column names too),
// seconds from 1,000 ms on, legends only for what varies, default titles
// from the figure and axes.
func TestPlotTexts(t *testing.T) {
	src := strings.Replace(testExperiment, "  groups[0].client.session.timeout.ms: [6000, 10000, 20000]",
		"  groups[0].client.session.timeout.ms: {values: [6000, 10000, 20000], column: timeout}", 1)
	src = strings.Replace(src, "  network.loss: [0, 0.01]\n", "  network.loss: [0.01]\n", 1)
	src = strings.Replace(src, "{kind: line, x: session_timeout_ms", "{kind: line, x: timeout", 1)
	src = strings.Replace(src, "x: session_timeout_ms, y: network_loss, z: false_evictions, file: heat}", "x: timeout, y: profile, z: false_evictions, file: heat}", 1)
	src = strings.Replace(src, "{kind: box, x: session_timeout_ms, y: unowned_partition_seconds, file: box}", "{kind: box, x: timeout, y: unowned_partition_seconds, series: profile, file: box}", 1)
	src = strings.Replace(src, "{kind: bar, x: profile, y: evictions, series: network_loss, file: bar}", "{kind: bar, x: profile, y: evictions, series: timeout, file: bar}", 1)
	e, err := Parse("t.yaml", []byte(src))
	require.NoError(t, err)
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	r, err := LoadResults(e, dir)
	require.NoError(t, err)
	timeout := e.paramByName("timeout")
	assert.Equal(t, "ms", timeout.Unit, "a custom column keeps the path's unit")
	ax := paramAxis(timeout, "")
	assert.Equal(t, "timeout (s)", ax.label, "6000..20000 ms read as seconds")
	assert.Equal(t, "6", valueText(timeout, 0, ax))
	assert.Equal(t, "timeout 10 s", seriesName(timeout, 1))
	line := e.Plots[0]
	ya := figureAxis(line.Y, "", "mean over seeds", []float64{2500, 12000})
	assert.Equal(t, "recovery (s, mean over seeds)", ya.label)
	assert.Equal(t, 1000.0, ya.div)
	small := figureAxis(line.Y, "", "mean over seeds", []float64{250, 900})
	assert.Equal(t, "recovery (ms, mean over seeds)", small.label)
	assert.Equal(t, "evictions (per run, mean over seeds)", figureAxis("evictions", "", "mean over seeds", []float64{1}).label)
	assert.Equal(t, "my label (ms)", figureAxis("recovery_ms", "my label (ms)", "x", []float64{5000}).label, "a user's unit is kept")
	assert.Equal(t, "Recovery by timeout", defaultTitle(&line, e))
	// network_loss has one value: it varies nothing and names no curve.
	for _, g := range r.groupBy("timeout", "") {
		assert.NotContains(t, g.name, "loss")
		assert.Contains(t, g.name, "profile")
	}
	for i := range e.Plots {
		_, err := r.figure(&e.Plots[i])
		assert.NoError(t, err, e.Plots[i].File)
	}
}

// TestBoxAndCDFNeverPool: a box plot without series must not mix two swept
// parameters into one bimodal box. Every box and every CDF
// curve holds the runs of one combination of the varying parameters, and a
// plot that would need too many is refused.
func TestBoxAndCDFNeverPool(t *testing.T) {
	e := parseTest(t)
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	r, err := LoadResults(e, dir)
	require.NoError(t, err)
	xi := r.paramIndex("session_timeout_ms")
	for _, x := range []string{"session_timeout_ms", ""} {
		groups := r.groupBy(x, "profile")
		want := 12
		if x != "" {
			want = 4
		}
		assert.Len(t, groups, want)
		for _, g := range groups {
			first := r.Points[g.points[0]]
			for _, i := range g.points {
				for j := range e.Params {
					if x != "" && j == xi {
						continue
					}
					assert.Equal(t, first.Values[j], r.Points[i].Values[j], "group %q pools two values of %s", g.name, e.Params[j].Column)
				}
			}
			assert.True(t, strings.HasPrefix(g.name, "profile "), "series first: %q", g.name)
		}
	}
	src := strings.Replace(testExperiment, "network.loss: [0, 0.01]", "network.loss: [0, 0.01, 0.02, 0.05]", 1)
	_, err = Parse("t.yaml", []byte(src))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "plots[2]: session_timeout_ms, network_loss, profile vary: 24 distributions to draw")
}

// TestEmptyPlotIsAnError: a figure no run has (here: no failover) is an
// error, not an empty frame announced as a plot.
func TestEmptyPlotIsAnError(t *testing.T) {
	src := strings.Replace(testExperiment, "y: recovery_ms, file: line}", "y: failover_recovery_ms, file: line}", 1)
	src = strings.Replace(src, "  - {kind: box, x: session_timeout_ms, y: unowned_partition_seconds, file: box}\n", "", 1)
	src = strings.Replace(src, "  - {kind: cdf, x: rebalance_duration_ms.p95, series: profile, file: cdf}\n", "", 1)
	e, err := Parse("t.yaml", []byte(src))
	require.NoError(t, err)
	o := Options{Out: t.TempDir(), Workers: 2, Runner: fakeRunner}
	_, err = Sweep(t.Context(), e, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to draw")
}

// TestBuiltinsAreNotLockStep: no built-in experiment compares assignors or
// protocols on a constant poll.interval (members polling in lock-step make
// eager look cheaper than it is), and a copy of protocol-comparison with a constant
// gets the warning in its sweep's warnings (and REPORT.md).
func TestBuiltinsAreNotLockStep(t *testing.T) {
	for _, name := range BuiltinNames() {
		data, _ := Builtin(name)
		e, err := Parse("builtin:"+name, data)
		require.NoError(t, err)
		assert.False(t, e.LockStep(), name)
	}
	data, _ := Builtin("protocol-comparison")
	src := strings.Replace(string(data), "      start: {at: 0s, stagger: 10ms}\n", "      start: {at: 0s, stagger: 10ms}\n      workload: {poll.interval: 100ms}\n", 1)
	require.NotEqual(t, string(data), src)
	e, err := Parse("pc.yaml", []byte(src))
	require.NoError(t, err)
	assert.True(t, e.LockStep(), "a constant poll.interval under a protocol comparison")
	e.Seeds = 2
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	r, err := LoadResults(e, dir)
	require.NoError(t, err)
	assert.Contains(t, r.Warnings(), scenario.LockStepWarning)
}

// TestPlotProblemsAreWarnings: category labels that collide are said in
// the sweep's warnings (and REPORT.md), not left to a reviewer's eye
// (else the report says nothing about them).
func TestPlotProblemsAreWarnings(t *testing.T) {
	data, _ := Builtin("protocol-comparison")
	src := strings.Replace(string(data), "labels: [crash, scale-out, scale-in, rolling, stuck]",
		"labels: [a crash without a restart, one member more joins, one member leaves the group, a rolling restart of all, a member stuck in processing]", 1)
	require.NotEqual(t, string(data), src)
	e, err := Parse("pc.yaml", []byte(src))
	require.NoError(t, err)
	e.Seeds = 2
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	r, err := LoadResults(e, dir)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(r.Warnings(), "\n"), "plot rebalance: x tick labels")
}
