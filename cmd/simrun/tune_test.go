// Goal: simrun tune finds an answer computed by hand, refuses a rate that
// too few member-hours cannot bound, and fails invalid configurations;
// simrun compare sees no difference between identical configurations and
// a clear one between a crash and no crash.
package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tuneOut struct {
	Recommended map[string]float64 `json:"recommended"`
	Method      string             `json:"method"`
	Tried       []struct {
		Values []float64 `json:"values"`
		Pass   bool      `json:"pass"`
		Checks []struct {
			Hi   any  `json:"ci95_hi"`
			Pass bool `json:"pass"`
		} `json:"checks"`
		Invalid string `json:"invalid"`
	} `json:"tried"`
	NeighbourFails []string       `json:"neighbour_fails"`
	Closest        string         `json:"closest"`
	Plots          []string       `json:"plots"`
	Reproduce      string         `json:"reproduce"`
	ReproduceRun   string         `json:"reproduce_decisive_run"`
	Config         map[string]any `json:"effective_config"`
}

const sessionPath = "groups[0].client.session.timeout.ms"

func tune(t *testing.T, want int, args ...string) tuneOut {
	t.Helper()
	code, out, errs := run(append([]string{"tune", "--json", "--out", t.TempDir()}, args...)...)
	require.Equal(t, want, code, errs)
	var r tuneOut
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return r
}

// A GC pause of P with heartbeat.interval.ms H: a member's session timer
// started at its last heartbeat, at most H before the pause, so a session
// timeout above P + H (+ a few round trips) never expires during the pause
// and one at or below P always does. The smallest session timeout without
// false evictions therefore lies in (P, P + H + a few RTTs].
func TestTuneKnownAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	const P, H = 8000.0, 3000.0
	r := tune(t, exitOK, "gc-pause", "--set", "faults[0].for=8s", "--set", "groups[0].client.heartbeat.interval.ms=3000",
		"--param", sessionPath+"=6000..20000:100", "--require", "false_evictions <= 0.8", "--seeds", "5", "--grid", "5")
	got := r.Recommended[sessionPath]
	assert.Greater(t, got, P)
	assert.LessOrEqual(t, got, P+H+100)
	assert.Equal(t, "bisection", r.Method)
	assert.NotEmpty(t, r.NeighbourFails, "why the value below fails")
	assert.Contains(t, r.ReproduceRun, "simrun run gc-pause")
	assert.Contains(t, r.Reproduce, "--param '"+sessionPath+"=6000..20000:100'")
	for _, p := range r.Plots {
		_, err := os.Stat(p)
		assert.NoError(t, err, p)
	}
	require.NotNil(t, r.Config)
	// The neighbour below the answer is one step (100 ms) away.
	var below float64
	for _, tr := range r.Tried {
		if tr.Values[0] < got && tr.Values[0] > below {
			below = tr.Values[0]
			assert.False(t, tr.Pass)
		}
	}
	assert.Equal(t, got-100, below)
}

// LO = HI evaluates that one value: its checks, pass or fail, no search
// (it was refused with "want LO < HI", though checking one value is a
// common question).
func TestTuneOneValue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	r := tune(t, exitOK, "gc-pause", "--param", sessionPath+"=30000..30000", "--require", "false_evictions <= 0.8", "--seeds", "5")
	require.Len(t, r.Tried, 1)
	assert.Equal(t, []float64{30000}, r.Tried[0].Values)
	assert.Equal(t, 30000.0, r.Recommended[sessionPath])
	assert.Equal(t, "one value (LO = HI)", r.Method)
	code, _, errs := run("tune", "gc-pause", "--param", sessionPath+"=30000..20000", "--require", "false_evictions <= 0.8")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "want LO <= HI")
}

// A requirement and a cost (--show) are drawn against the parameter on one
// figure, tradeoff.png, the recommendation marked (what the requirement
// costs is the question tune answers); an
// unknown --show figure is bad input.
func TestTuneTradeoffFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	r := tune(t, exitOK, "crash-one-member", "--param", sessionPath+"=6000..30000", "--require", "false_evictions <= 2", "--show", "recovery_ms", "--seeds", "3", "--grid", "3")
	require.NotEmpty(t, r.Plots)
	assert.Equal(t, "tradeoff.png", filepath.Base(r.Plots[0]))
	_, err := os.Stat(r.Plots[0])
	assert.NoError(t, err)
	assert.Contains(t, r.Reproduce, "--show recovery_ms")
	code, _, errs := run("tune", "crash-one-member", "--param", sessionPath+"=6000..30000", "--require", "false_evictions <= 0.5", "--show", "nope")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errs, "--show nope")
}

// 0 false evictions in a few member-hours does not bound the rate below
// 0.01 per member-hour: nothing passes, exit 1, and the closest failure is
// named.
func TestTuneRateNeedsExposure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	r := tune(t, exitViolation, "gc-pause", "--param", sessionPath+"=20000..30000", "--require", "false_evictions_per_member_hour <= 0.01", "--seeds", "3", "--grid", "3")
	assert.Nil(t, r.Recommended)
	assert.Contains(t, r.Closest, "false_evictions_per_member_hour <= 0.01 fails: upper bound")
	for _, tr := range r.Tried {
		assert.False(t, tr.Pass)
	}
}

// Below group.min.session.timeout.ms the broker refuses the members
// (INVALID_SESSION_TIMEOUT): no false evictions, but no group either. Such
// a value fails every requirement.
func TestTuneInvalidRunsFail(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	r := tune(t, exitViolation, "gc-pause", "--set", "groups[0].client.heartbeat.interval.ms=1000", "--param", sessionPath+"=2000..5000:1000", "--require", "false_evictions <= 1", "--seeds", "2", "--grid", "4")
	require.Len(t, r.Tried, 4)
	for _, tr := range r.Tried {
		assert.Contains(t, tr.Invalid, "never formed a group")
		assert.False(t, tr.Checks[0].Pass)
	}
}

func TestTuneBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"tune", "gc-pause", "--require", "evictions <= 1"},
		{"tune", "gc-pause", "--param", sessionPath + "=6000..9000"},
		{"tune", "gc-pause", "--param", sessionPath + "=9000..6000", "--require", "evictions <= 1"},
		{"tune", "gc-pause", "--param", sessionPath + "=6000..9000", "--require", "evictons <= 1"},
		{"tune", "gc-pause", "--param", sessionPath + "=6000..9000", "--require", "evictions ~ 1"},
		{"tune", "gc-pause", "--param", sessionPath + "=6000..9000", "--require", "evictions <= 1", "--minimize", "--maximize"},
		{"tune", "gc-pause", "--param", "groups[0].client.sesion.timeout.ms=6000..9000", "--require", "evictions <= 1"},
		{"tune", "gc-pause", "--param", "groups[0].members=-5..-1", "--require", "evictions <= 1"},
	} {
		code, _, errs := run(args...)
		assert.Equal(t, exitBadInput, code, "%v: %s", args, errs)
	}
}

type compareOut struct {
	Figures []struct {
		Figure          string `json:"figure"`
		Diff            any    `json:"diff"`
		DiffLo          any    `json:"diff_ci95_lo"`
		DiffHi          any    `json:"diff_ci95_hi"`
		Distinguishable bool   `json:"distinguishable"`
	} `json:"figures"`
}

func compare(t *testing.T, args ...string) compareOut {
	t.Helper()
	code, out, errs := run(append([]string{"compare", "--json", "--out", t.TempDir()}, args...)...)
	require.Equal(t, exitOK, code, errs)
	var c compareOut
	require.NoError(t, json.Unmarshal([]byte(out), &c), out)
	require.NotEmpty(t, c.Figures)
	return c
}

func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	// Identical configurations, one given as a file: every interval of the
	// difference contains 0.
	dir := t.TempDir()
	data := []byte(lognormalCrash)
	file := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	same := compare(t, file, file, "--seeds", "6")
	for _, f := range same.Figures {
		assert.False(t, f.Distinguishable, f.Figure)
		if lo, ok := f.DiffLo.(float64); ok {
			assert.LessOrEqual(t, lo, 0.0, f.Figure)
			assert.GreaterOrEqual(t, f.DiffHi.(float64), 0.0, f.Figure)
		}
	}
	// A crash vs no crash (one scenario, --b-set): evictions differ.
	diff := compare(t, file, "--b-set", "faults=[]", "--seeds", "6")
	found := false
	for _, f := range diff.Figures {
		if f.Figure == "evictions" {
			found = true
			assert.True(t, f.Distinguishable)
			assert.Less(t, f.DiffHi.(float64), 0.0, "no crash, no eviction")
		}
	}
	assert.True(t, found)
}

// lognormalCrash: a crash with a lognormal network, so seeds differ.
const lognormalCrash = `name: lognormal-crash
duration: 60s
network:
  latency: {dist: lognormal, median: 1ms, p99: 20ms}
topics:
  - {name: orders, partitions: 6}
groups:
  - id: payments
    members: 3
    subscribe: [orders]
    client:
      profile: kafka-3.x
      session.timeout.ms: 10000
      heartbeat.interval.ms: 3000
faults:
  - {at: 20s, crash: payments-1}
`
