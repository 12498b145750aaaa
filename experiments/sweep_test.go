// Goal: prove the sweep's promises — output files identical for any worker
// count, for sharded-then-merged runs and for interrupted-then-resumed runs
// — and that experiment files are validated with file:line errors.
// Method: a fake runner (a pure function of scenario and seed, with a
// seeded PCG) stands in for the harness so the tests are fast and exact;
// one test runs the real harness on the quickstart experiment.
package experiments

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

const testExperiment = `name: test-grid
title: Test grid
question: Does the fake runner depend on the session timeout?
scenario:
  name: tiny
  duration: 60s
  topics:
    - {name: t, partitions: 4}
  groups:
    - id: g
      members: 3
      subscribe: [t]
      client:
        profile: kafka-3.x
        session.timeout.ms: 10000
        heartbeat.interval.ms: 3000
  faults:
    - {at: 20s, crash: g-1}
seeds: 5
sweep:
  groups[0].client.session.timeout.ms: [6000, 10000, 20000]
  network.loss: [0, 0.01]
  groups[0].client.profile: [kafka-2.x, kafka-3.x]
plots:
  - {kind: line, x: session_timeout_ms, y: recovery_ms, file: line}
  - {kind: heatmap, x: session_timeout_ms, y: network_loss, z: false_evictions, file: heat}
  - {kind: cdf, x: rebalance_duration_ms.p95, series: profile, file: cdf}
  - {kind: box, x: session_timeout_ms, y: unowned_partition_seconds, file: box}
  - {kind: bar, x: profile, y: evictions, series: network_loss, file: bar}
`

// fakeRunner derives a summary from the scenario and seed only.
func fakeRunner(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
	r := rand.New(rand.NewPCG(seed, uint64(sc.Groups[0].Client.SessionTimeout)))
	sess := sc.Groups[0].Client.SessionTimeout.Milliseconds()
	d1 := int64(2000 + r.IntN(1000))
	d2 := int64(1000 + r.IntN(3000))
	ev := 0
	if r.Float64() < sc.Network.Loss*50 {
		ev = 1
	}
	return &harness.Summary{
		Scenario: sc.Name, Seed: seed, Events: int64(100 + r.IntN(50)),
		TraceSHA256: strings.Repeat("ab", 4),
		Groups: []harness.GroupSummary{{
			ID: "g",
			Rebalances: []harness.Rebalance{
				{Generation: 1, StartMs: 0, EndMs: d1, DurationMs: d1, Trigger: "join", Members: 3},
				{Generation: 2, StartMs: 20000 + sess/2, EndMs: 20000 + sess/2 + d2, DurationMs: d2, Trigger: "session-expired", Members: 2},
			},
			Evictions: 1 + ev, FalseEvictions: ev, MemberHours: 0.05,
			UnownedPartitionSeconds: float64(r.IntN(10000)) / 100, FinalGeneration: 2, StableAtEnd: true, FirstFaultMs: 20000,
		}},
		InvariantViolations: []harness.Violation{},
		Valid:               true,
	}, nil
}

func parseTest(t *testing.T) *Experiment {
	t.Helper()
	e, err := Parse("test.yaml", []byte(testExperiment))
	require.NoError(t, err)
	return e
}

// readTree returns every file under dir (relative path → bytes).
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	}))
	return out
}

func requireSameTree(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	var wk, gk []string
	for k := range want {
		wk = append(wk, k)
	}
	for k := range got {
		gk = append(gk, k)
	}
	sort.Strings(wk)
	sort.Strings(gk)
	require.Equal(t, wk, gk, "same file list")
	for _, k := range wk {
		require.True(t, bytes.Equal(want[k], got[k]), "file %s differs", k)
	}
}

func sweep(t *testing.T, e *Experiment, o Options) *Outcome {
	t.Helper()
	if o.Runner == nil {
		o.Runner = fakeRunner
	}
	out, err := Sweep(context.Background(), e, o)
	require.NoError(t, err)
	return out
}

func TestWorkersGiveIdenticalFiles(t *testing.T) {
	e := parseTest(t)
	d1, d2, d8 := t.TempDir(), t.TempDir(), t.TempDir()
	o1 := sweep(t, e, Options{Out: d1, Workers: 1})
	sweep(t, e, Options{Out: d2, Workers: 2})
	sweep(t, e, Options{Out: d8, Workers: 8})
	require.True(t, o1.Complete)
	assert.Equal(t, 12, o1.Points)
	assert.Equal(t, 60, o1.Ran)
	t1 := readTree(t, d1)
	requireSameTree(t, t1, readTree(t, d2))
	requireSameTree(t, t1, readTree(t, d8))
	for _, f := range []string{"points.csv", "summary.csv", "line.png", "line.svg", "heat.png", "cdf.svg", "box.png", "bar.svg"} {
		assert.Contains(t, t1, f)
	}
	lines := strings.Split(strings.TrimSpace(string(t1["points.csv"])), "\n")
	assert.Len(t, lines, 1+12*5, "one row per point and seed")
	assert.True(t, strings.HasPrefix(lines[0], "point,session_timeout_ms,network_loss,profile,seed,rebalance_count,"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "p0000,6000,0,kafka-2.x,1,2,"), lines[1])
}

func TestShardsMergedEqualUnsharded(t *testing.T) {
	e := parseTest(t)
	whole := t.TempDir()
	sweep(t, e, Options{Out: whole, Workers: 2})
	var dirs []string
	for i := 0; i < 3; i++ {
		d := t.TempDir()
		o := sweep(t, e, Options{Out: d, Workers: 2, Shard: Shard{Index: i, Count: 3}})
		assert.False(t, o.Complete, "a shard alone is incomplete")
		assert.Equal(t, 4, o.Points)
		assert.Equal(t, 8, o.Missing)
		dirs = append(dirs, d)
	}
	merged := t.TempDir()
	_, err := Merge(dirs, merged)
	require.NoError(t, err)
	requireSameTree(t, readTree(t, whole), readTree(t, merged))

	// Merging into one of the shard directories works too.
	_, err = Merge(dirs, dirs[0])
	require.NoError(t, err)
	requireSameTree(t, readTree(t, whole), readTree(t, dirs[0]))

	// Missing shards are named.
	_, err = Merge(dirs[1:2], t.TempDir())
	require.ErrorContains(t, err, "8 of 12 points not finished")
}

func TestInterruptedSweepResumes(t *testing.T) {
	e := parseTest(t)
	whole := t.TempDir()
	sweep(t, e, Options{Out: whole, Workers: 3})

	for _, workers := range []int{1, 3} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int32
		interrupting := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
			if n.Add(1) == 23 {
				cancel() // as Ctrl-C in the middle of point 4
			}
			return fakeRunner(sc, seed)
		}
		out, err := Sweep(ctx, e, Options{Out: dir, Workers: workers, Runner: interrupting})
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, out.Complete)
		_, statErr := os.Stat(filepath.Join(dir, "points.csv"))
		require.True(t, os.IsNotExist(statErr), "no result files from an interrupted sweep")
		finished := readTree(t, filepath.Join(dir, pointsDir))
		require.NotEmpty(t, finished)
		require.Less(t, len(finished), 12)

		out2 := sweep(t, e, Options{Out: dir, Workers: workers})
		require.True(t, out2.Complete)
		assert.Equal(t, len(finished), out2.Skipped, "finished points are not run again")
		requireSameTree(t, readTree(t, whole), readTree(t, dir))
	}
}

func TestStalePointFileRunsAgain(t *testing.T) {
	e := parseTest(t)
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	p := filepath.Join(dir, pointsDir, "p0003.csv")
	require.NoError(t, os.WriteFile(p, []byte("# key=stale\ngarbage\n"), 0o644))
	// A torn temp file left by a killed process is ignored.
	require.NoError(t, os.WriteFile(filepath.Join(dir, pointsDir, ".tmp-p0004.csv-123"), []byte("half"), 0o644))
	out := sweep(t, e, Options{Out: dir, Workers: 2})
	assert.Equal(t, 11, out.Skipped)
	assert.Equal(t, 5, out.Ran)
}

func TestPlotFilesDecode(t *testing.T) {
	e := parseTest(t)
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	for _, p := range e.Plots {
		f, err := os.Open(filepath.Join(dir, p.File+".png"))
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err, p.File)
		assert.Greater(t, img.Bounds().Dx(), 800, "legible width at 150 dpi")

		b, err := os.ReadFile(filepath.Join(dir, p.File+".svg"))
		require.NoError(t, err)
		dec := xml.NewDecoder(bytes.NewReader(b))
		root := ""
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, p.File)
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		assert.Equal(t, "svg", root, p.File)
	}
}

func TestProgress(t *testing.T) {
	e := parseTest(t)
	var buf bytes.Buffer
	sweep(t, e, Options{Out: t.TempDir(), Workers: 2, Progress: &buf})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	assert.Len(t, lines, 10, "one line per 10%% when not a terminal")
	assert.Contains(t, lines[9], "60/60 runs (100%)")
	buf.Reset()
	sweep(t, e, Options{Out: t.TempDir(), Workers: 2, Progress: &buf, ProgressTTY: true})
	assert.Contains(t, buf.String(), "\r[")
	assert.Contains(t, buf.String(), "ETA")
}

func TestReportAndPointScenarios(t *testing.T) {
	e := parseTest(t)
	dir := t.TempDir()
	sweep(t, e, Options{Out: dir, Workers: 2})
	require.NoError(t, WriteReport(e, dir, ReportOptions{Dir: "results/test-grid", Ref: "test.yaml"}))
	md, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	require.NoError(t, err)
	s := string(md)
	assert.Contains(t, s, "Does the fake runner depend on the session timeout?")
	assert.Contains(t, s, "| `groups[0].client.session.timeout.ms` | `session_timeout_ms` | 6000, 10000, 20000 |")
	assert.Contains(t, s, "![")
	assert.Contains(t, s, "line.png")
	assert.Contains(t, s, "simrun run results/test-grid/scenarios/p0000.yaml --seed 1")
	// Every point's scenario file parses to the swept scenario.
	for _, pt := range e.Points() {
		b, err := os.ReadFile(filepath.Join(dir, "scenarios", pt.ID+".yaml"))
		require.NoError(t, err)
		sc, err := scenario.Parse("x.yaml", b)
		require.NoError(t, err)
		want, _ := e.Scenario(pt)
		assert.Equal(t, want.Groups[0].Client.SessionTimeout, sc.Groups[0].Client.SessionTimeout)
		assert.Equal(t, want.Network.Loss, sc.Network.Loss)
	}
}

// TestParseErrors: bad experiment files are errors naming file and line.
func TestParseErrors(t *testing.T) {
	base := "name: x\nscenario: crash-one-member\nseeds: 2\n"
	cases := []struct {
		name, file, want string
	}{
		{"unknown top-level key", base + "sweeps: {}\n", "x.yaml:4: unknown key \"sweeps\""},
		{"no seeds", "name: x\nscenario: crash-one-member\n", "seeds: required"},
		{"bad seeds", "name: x\nscenario: crash-one-member\nseeds: many\n", "x.yaml:3: seeds"},
		{"no such scenario", "name: x\nscenario: no-such\nseeds: 1\n", "x.yaml:2: scenario \"no-such\""},
		{"unknown path", base + "sweep:\n  groups[0].client.session.timeout: [1, 2]\n", "x.yaml:5: sweep groups[0].client.session.timeout"},
		{"index out of range", base + "sweep:\n  groups[3].members: [1]\n", "index out of range"},
		{"invalid value names its line", base + "sweep:\n  groups[0].client.session.timeout.ms:\n    - 10000\n    - -5\n", "x.yaml:7: sweep groups[0].client.session.timeout.ms = -5"},
		{"bad combination", base + "sweep:\n  groups[0].client.session.timeout.ms: [6000]\n  groups[0].client.heartbeat.interval.ms: [7000]\n", "x.yaml:5: sweep point p0000"},
		{"empty values", base + "sweep:\n  network.loss: []\n", "x.yaml:5: sweep network.loss: want a non-empty list"},
		{"duplicate column", base + "sweep:\n  groups[0].client.session.timeout.ms: [6000]\n  coordinator.group.min.session.timeout.ms: {values: [6000], column: session_timeout_ms}\n", "x.yaml:6: sweep coordinator.group.min.session.timeout.ms: column \"session_timeout_ms\" already used by line 5"},
		{"labels: too few", base + "sweep:\n  groups[0].members: {values: [1, 2], labels: [one]}\n", "x.yaml:5: sweep groups[0].members: labels: want a list of 2 names, one per value"},
		{"labels: twice", base + "sweep:\n  groups[0].members: {values: [1, 2], labels: [a, a]}\n", "x.yaml:5: sweep groups[0].members: label \"a\" used twice"},
		{"labels: not a name", base + "sweep:\n  groups[0].members:\n    values: [1, 2]\n    labels: [a, [b]]\n", "x.yaml:7: sweep groups[0].members: labels[1]: want a name"},
		{"plot of unknown figure", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: line, x: network_loss, y: nope}\n", "x.yaml:7: plots[0]: y \"nope\" is not a figure"},
		{"plot of unswept x", base + "plots:\n  - {kind: line, x: members, y: rebalance_count}\n", "x.yaml:5: plots[0]: x \"members\" is not a swept parameter"},
		{"unknown plot kind", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: pie, x: network_loss, y: rebalance_count}\n", "kind \"pie\""},
		{"timeline with x", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: timeline, x: network_loss, y: generation}\n", "x.yaml:7: plots[0]: x: a timeline's x axis is simulated time; leave x out"},
		{"timeline of a per-run figure", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: timeline, y: rebalance_count}\n", "x.yaml:7: plots[0]: y \"rebalance_count\": a timeline shows one of generation, owned_partitions, unowned_partitions"},
		{"timeline seed beyond the seeds", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: timeline, y: generation, seed: 3}\n", "x.yaml:7: plots[0]: seed 3: the experiment runs seeds 1..2"},
		{"timeline seed not a number", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: timeline, y: generation, seed: first}\n", "x.yaml:7: plots[0]: seed \"first\": want a whole number of at least 1"},
		{"seed on a bar plot", base + "sweep:\n  network.loss: [0]\nplots:\n  - {kind: bar, x: network_loss, y: rebalance_count, seed: 1}\n", "x.yaml:7: plots[0]: seed: only a timeline plot draws one seed's run"},
		{"inline scenario error keeps lines", "name: x\nseeds: 1\nscenario:\n  name: s\n  duration: -1s\n  topics: [{name: t, partitions: 1}]\n  groups: [{id: g, members: 1, subscribe: [t]}]\n", ":5:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(c.file))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestColumnsAndDurations(t *testing.T) {
	e, err := Parse("x.yaml", []byte("name: x\nscenario: gc-pause\nseeds: 1\nsweep:\n  faults[0].for: [1s, 2500ms]\n  groups[0].members: {values: [3, 4], column: group_size}\n"))
	require.NoError(t, err)
	require.Len(t, e.Params, 2)
	assert.Equal(t, "fault_for_ms", e.Params[0].Column)
	assert.Equal(t, []string{"1000", "2500"}, []string{e.Params[0].Values[0].Text, e.Params[0].Values[1].Text})
	assert.Equal(t, "group_size", e.Params[1].Column)
	pts := e.Points()
	require.Len(t, pts, 4)
	assert.Equal(t, []int{0, 1}, pts[1].Values, "the last parameter varies fastest")
	assert.Equal(t, []int{1, 0}, pts[2].Values)
	sc, err := e.Scenario(pts[3])
	require.NoError(t, err)
	assert.Equal(t, 4, sc.Groups[0].Members)
	assert.Equal(t, "2.5s", sc.Faults[0].For.String())
}

func TestParseShard(t *testing.T) {
	s, err := ParseShard("2/5")
	require.NoError(t, err)
	assert.Equal(t, Shard{Index: 2, Count: 5}, s)
	for _, bad := range []string{"5/5", "-1/2", "1", "a/b", "0/0"} {
		_, err := ParseShard(bad)
		assert.Error(t, err, bad)
	}
}

func TestBuiltinExperimentsParse(t *testing.T) {
	names := BuiltinNames()
	require.Contains(t, names, "quickstart")
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			e, err := Load(n)
			require.NoError(t, err)
			assert.Equal(t, n, e.Name)
			assert.NotEmpty(t, e.Question, "each built-in answers a question")
			assert.NotEmpty(t, e.Plots)
		})
	}
}

// TestQuickstartWithHarness runs the real harness end to end.
func TestQuickstartWithHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the harness")
	}
	e, err := Load("quickstart")
	require.NoError(t, err)
	d1, d2 := t.TempDir(), t.TempDir()
	o, err := Sweep(context.Background(), e, Options{Out: d1, Workers: 1})
	require.NoError(t, err)
	require.True(t, o.Complete)
	_, err = Sweep(context.Background(), e, Options{Out: d2, Workers: 2})
	require.NoError(t, err)
	requireSameTree(t, readTree(t, d1), readTree(t, d2))
	require.NoError(t, WriteReport(e, d1, ReportOptions{}))
}

func TestDefaultColumn(t *testing.T) {
	for path, want := range map[string]string{
		"groups[0].client.session.timeout.ms":          "session_timeout_ms",
		"groups[0].members":                            "group_members",
		"faults[1].for":                                "fault_for",
		"network.loss":                                 "network_loss",
		"coordinator.group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
		"groups[0].start.stagger":                      "start_stagger",
		"groups[0].client.group.instance.id":           "group_instance_id",
		"topics[0].partitions":                         "topic_partitions",
		"groups[0].workload.poll.interval":             "poll_interval",
	} {
		assert.Equal(t, want, defaultColumn(path), path)
	}
}

// TestInvalidPointsNeverBest: a configuration the broker rejects must not
// look best: the 6000 ms points are invalid (every member died of
// INVALID_SESSION_TIMEOUT) and have the lowest downtime and the fewest
// rebalances. The sweep warns once per invalid point, points.csv and
// summary.csv say valid / valid_fraction, and REPORT.md never names them
// lowest or highest.
func TestInvalidPointsNeverBest(t *testing.T) {
	e := parseTest(t)
	dir := t.TempDir()
	var log bytes.Buffer
	broken := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
		s, _ := fakeRunner(sc, seed)
		if sc.Groups[0].Client.SessionTimeout.Milliseconds() == 6000 {
			s.Valid = false
			s.InvalidReason = "group g: a member stopped on a fatal error (g-0: INVALID_SESSION_TIMEOUT)"
			s.Groups[0].UnownedPartitionSeconds = 0
			s.Groups[0].Rebalances = s.Groups[0].Rebalances[:0]
			s.Groups[0].StableAtEnd = false
		}
		return s, nil
	}
	sweep(t, e, Options{Out: dir, Workers: 2, Runner: broken, Log: &log})
	invalidPoints := 0
	for _, pt := range e.Points() {
		if strings.Contains(e.Label(pt), "6000") {
			invalidPoints++
		}
	}
	assert.Equal(t, invalidPoints, strings.Count(log.String(), "INVALID: group g"), "one warning per invalid point:\n%s", log.String())
	require.NoError(t, WriteReport(e, dir, ReportOptions{Dir: "results/test-grid", Ref: "test.yaml"}))
	md, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(md), "\n") {
		if strings.Contains(line, "lowest mean") {
			assert.NotContains(t, line, "session_timeout_ms=6000", "an invalid point is never named: %s", line)
		}
	}
	assert.Contains(t, string(md), "lowest mean")
	assert.Contains(t, string(md), "## Warnings")
	sum, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	require.NoError(t, err)
	lines := strings.Split(string(sum), "\n")
	hdr := strings.Split(lines[0], ",")
	vf := -1
	for i, h := range hdr {
		if h == "valid_fraction" {
			vf = i
		}
	}
	require.Positive(t, vf)
	zeros := 0
	for _, l := range lines[1:] {
		if c := strings.Split(l, ","); len(c) > vf && c[vf] == "0" {
			zeros++
		}
	}
	assert.Equal(t, invalidPoints, zeros)
	pts, err := os.ReadFile(filepath.Join(dir, "points.csv"))
	require.NoError(t, err)
	assert.Contains(t, strings.SplitN(string(pts), "\n", 2)[0], ",valid,")
}

// TestIdenticalSeedsWarn: a point whose seeds all give the same figures is
// named: its interval says nothing (seeds that vary nothing are a wasted
// sweep, not a tight result).
func TestIdenticalSeedsWarn(t *testing.T) {
	e := parseTest(t)
	dir := t.TempDir()
	var log bytes.Buffer
	same := func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) { return fakeRunner(sc, 1) }
	sweep(t, e, Options{Out: dir, Workers: 2, Runner: same, Log: &log})
	assert.Equal(t, len(e.Points()), strings.Count(log.String(), "seeds gave identical figures"))
}

// TestSweepLabels: labels name a parameter's values (a whole mapping here)
// in the CSV, legends and axes; the overrides are the values.
func TestSweepLabels(t *testing.T) {
	e, err := Parse("x.yaml", []byte("name: x\nscenario: crash-one-member\nseeds: 1\nsweep:\n  groups[0].client:\n    column: protocol\n    labels: [eager, cooperative]\n    values:\n      - {partition.assignment.strategy: range}\n      - {partition.assignment.strategy: cooperative-sticky}\n"))
	require.NoError(t, err)
	require.Len(t, e.Params, 1)
	p := e.Params[0]
	assert.Equal(t, "protocol", p.Column)
	assert.Equal(t, []string{"eager", "cooperative"}, []string{p.Values[0].Text, p.Values[1].Text})
	assert.False(t, p.Values[0].IsNum)
	sc, err := e.Scenario(e.Points()[1])
	require.NoError(t, err)
	assert.Equal(t, []string{"cooperative-sticky"}, sc.Groups[0].Client.Assignors)
}
