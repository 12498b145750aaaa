package experiments

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// TestTuneDeterministicAndCached: the same search at 1 and 2 workers tries
// the same values and gets the same numbers; run again, and over a
// different range that shares values, finished values are read back, not
// run again.
func TestTuneDeterministicAndCached(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	data, ok := scenario.Builtin("gc-pause")
	require.True(t, ok)
	var runs atomic.Int64
	counting := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
		runs.Add(1)
		return HarnessRunner(sc, seed)
	}
	spec := func(rng string) *TuneSpec {
		p, err := ParseTuneParam("groups[0].client.session.timeout.ms=" + rng)
		require.NoError(t, err)
		r, err := ParseRequirement("false_evictions <= 0.8")
		require.NoError(t, err)
		return &TuneSpec{ScenarioSource: "builtin:gc-pause", ScenarioData: data, Params: []TuneParam{p}, Requirements: []Requirement{r}, Seeds: 5, Grid: 5}
	}
	dir1, dir2 := t.TempDir(), t.TempDir()
	a, err := Tune(context.Background(), spec("6000..30000:500"), TuneOptions{Out: dir1, Workers: 1, Runner: counting})
	require.NoError(t, err)
	first := runs.Load()
	b, err := Tune(context.Background(), spec("6000..30000:500"), TuneOptions{Out: dir2, Workers: 2, Runner: counting})
	require.NoError(t, err)
	require.Equal(t, len(a.Trials), len(b.Trials))
	for i := range a.Trials {
		assert.Equal(t, a.Trials[i].Values, b.Trials[i].Values)
		assert.Equal(t, a.Trials[i].Checks[0].Est, b.Trials[i].Checks[0].Est)
	}
	assert.Equal(t, a.Trials[a.Recommended].Values, b.Trials[b.Recommended].Values)
	assert.Equal(t, 2*first, runs.Load())

	// Again in dir1: everything is read back.
	_, err = Tune(context.Background(), spec("6000..30000:500"), TuneOptions{Out: dir1, Workers: 2, Runner: counting})
	require.NoError(t, err)
	assert.Equal(t, 2*first, runs.Load(), "a resumed search runs nothing")
	// A narrower range over the same lattice reuses the values it shares.
	c, err := Tune(context.Background(), spec("6000..18000:500"), TuneOptions{Out: dir1, Workers: 2, Runner: counting})
	require.NoError(t, err)
	assert.Less(t, runs.Load()-2*first, int64(5*len(c.Trials)), "shared values are not run again")
	assert.Equal(t, a.Trials[a.Recommended].Values, c.Trials[c.Recommended].Values)
}

// A run that panics is reported as a PanicError naming point and seed (an
// internal error for simrun, not bad input).
func TestSweepPanicIsPanicError(t *testing.T) {
	e, err := Parse("t.yaml", []byte(testExperiment))
	require.NoError(t, err)
	boom := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
		if seed == 3 {
			panic("boom")
		}
		return fakeRunner(sc, seed)
	}
	_, err = Sweep(context.Background(), e, Options{Out: t.TempDir(), Workers: 1, Runner: boom})
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Error(), "seed 3: panic: boom")
	assert.NotEmpty(t, pe.Stack)
}

// The search's decisions on synthetic trials: the bracket around the
// pass/fail switch, the neighbour on the unsafe side, and the grid
// fallback when a figure moves both ways beyond its intervals.
func TestTuneSearchDecisions(t *testing.T) {
	req := Requirement{Text: "evictions <= 0.5", Figure: "evictions", Stat: "mean", Op: "<=", Bound: 0.5}
	trial := func(x, est, lo, hi float64) Trial {
		e := Estimate{Value: est, Lo: lo, Hi: hi, N: 10, Kind: KindCount}
		return Trial{Values: []float64{x}, Pass: req.holds(e), Checks: []Check{{Est: e, Pass: req.holds(e)}}}
	}
	spec := &TuneSpec{Params: []TuneParam{{Column: "x", Lo: 0, Hi: 40, Step: 1}}, Requirements: []Requirement{req}}
	r := &TuneResult{Spec: spec, Trials: []Trial{
		trial(30, 0, 0, 0.3), trial(0, 1, 0.7, 1.4), trial(10, 1, 0.7, 1.4), trial(20, 0.1, 0, 0.4), trial(40, 0, 0, 0.3),
	}}
	assert.Equal(t, "", r.monotone())
	lo, hi := r.bracket()
	assert.Equal(t, 10.0, r.Trials[lo].Values[0])
	assert.Equal(t, 20.0, r.Trials[hi].Values[0])
	r.pick()
	assert.Equal(t, 20.0, r.Trials[r.Recommended].Values[0])
	assert.Equal(t, 10.0, r.Trials[r.Neighbour].Values[0])
	assert.False(t, r.Edge)

	spec.Maximize = true
	r.pick()
	assert.Equal(t, 40.0, r.Trials[r.Recommended].Values[0])
	assert.True(t, r.Edge, "the largest value of the range")
	spec.Maximize = false

	// A figure that rises then falls, beyond its intervals: no bisection.
	r.Trials = append(r.Trials, trial(5, 3, 2.5, 3.5))
	assert.Contains(t, r.monotone(), "not monotone")
	// Pass, fail, pass: no bisection either.
	r.Trials = []Trial{trial(0, 0, 0, 0.3), trial(10, 1, 0.7, 1.4), trial(20, 0, 0, 0.3)}
	assert.Contains(t, r.monotone(), "more than once")
}

// TestTunePlotZoomsOnTheDecisiveInterval: the tune plot shows the coarse
// grid cell where the requirement switches (with the bisection's values in
// it), its title names the scenario and its key settings but not the swept
// one, and durations of 1,000 ms and more read in seconds.
func TestTunePlotZoomsOnTheDecisiveInterval(t *testing.T) {
	spec := &TuneSpec{ScenarioSource: "gc.yaml", ScenarioData: []byte("name: gc\nduration: 60s\ntopics: [{name: t, partitions: 2}]\ngroups: [{id: g, members: 2, subscribe: [t], client: {heartbeat.interval.ms: 3000}}]\n"),
		Params: []TuneParam{{Path: "groups[0].client.session.timeout.ms", Column: "session_timeout_ms", Lo: 6000, Hi: 30000, Step: 200}},
		Seeds:  10}
	r := &TuneResult{Spec: spec}
	for i, v := range []float64{6000, 14000, 22000, 30000, 18000, 16000, 17000} {
		round := 1
		if i >= 4 {
			round = 2 + i - 4
		}
		r.Trials = append(r.Trials, Trial{Values: []float64{v}, Round: round, Pass: v >= 17000})
	}
	r.Recommended, r.Neighbour = 6, 5
	lo, hi := r.decisive()
	assert.Equal(t, []float64{14000, 22000}, []float64{lo, hi}, "from the grid value below the switch to the one above it")
	title := r.plotTitle("false evictions", "session timeout")
	assert.Contains(t, title, "gc: false evictions vs session timeout\n2 members, kafka-3.x")
	assert.Contains(t, title, "heartbeat 3 s")
	assert.NotContains(t, title, "session 45 s", "the swept setting is on the x axis, not in the title")
	assert.Contains(t, title, "10 seeds per value")
	r.Neighbour = -1
	lo, hi = r.decisive()
	assert.True(t, math.IsInf(lo, -1) && math.IsInf(hi, 1), "no switch: the whole range")
}

// TestTuneQuantisedRecoveryNote: recovery_ms that takes at most two values
// over the seeds at a value tried gets tune's one-line note (a quantised
// figure makes the bisection's answer look sharper than it is).
func TestTuneQuantisedRecoveryNote(t *testing.T) {
	fi := figureIndex("recovery_ms")
	runsOf := func(vals ...float64) [][]float64 {
		var out [][]float64
		for _, v := range vals {
			run := make([]float64, len(figureDefs))
			run[fi] = v
			out = append(out, run)
		}
		return out
	}
	spec := &TuneSpec{Params: []TuneParam{{Path: "groups[0].client.session.timeout.ms", Column: "session_timeout_ms"}},
		Requirements: []Requirement{{Figure: "recovery_ms", Stat: "mean", Op: "<=", Bound: 30000}}}
	r := &TuneResult{Spec: spec, Trials: []Trial{{Values: []float64{10000}, runs: runsOf(13000, 13000, 16000, 13000, 16000)}}}
	assert.Contains(t, r.QuantisedRecovery(), "recovery_ms at session_timeout_ms=10000 takes 2 distinct value(s) over 5 seeds: recovery is quantised")
	r.Trials[0].runs = runsOf(13000, 13500, 16000, 13200, 16100)
	assert.Empty(t, r.QuantisedRecovery())
	spec.Requirements[0].Figure = "false_evictions"
	r.Trials[0].runs = runsOf(13000, 13000, 13000, 13000, 13000)
	assert.Empty(t, r.QuantisedRecovery(), "only when recovery is asked about")
}
