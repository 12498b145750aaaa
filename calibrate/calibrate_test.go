package calibrate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/realkafka"
	"github.com/rebalsim/rebalsim/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite calibrate/testdata/real and testdata/golden from the fake runner")

// testVersions: a classic line and a consumer-protocol one.
var testVersions = []string{"3.9.1", "4.4.0"}

func testSuite(t *testing.T) *Suite {
	t.Helper()
	s, err := LoadSuite(filepath.Join("testdata", "suite"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func nan() float64 { return math.NaN() }

// runs builds runs of one figure (index 0 of a one-figure table): real
// repetition r's value reals[r-1], and per repetition the simulated values
// sims[r-1] (seeds 1..).
func runs(reals []float64, sims [][]float64) (sim, real []Run) {
	for i, v := range reals {
		real = append(real, Run{Rep: i + 1, Values: []float64{v}})
	}
	for i, vs := range sims {
		for j, v := range vs {
			sim = append(sim, Run{Rep: i + 1, Seed: uint64(j + 1), Values: []float64{v}})
		}
	}
	return sim, real
}

// TestVerdicts: the tolerance rule (docs/CALIBRATE.md) from fixed inputs.
func TestVerdicts(t *testing.T) {
	timing := Figure{Name: "t", Class: Timing, Unit: "ms"}
	count := Figure{Name: "c", Class: Count}
	ps := Figure{Name: "p", Class: PartitionSeconds}
	cases := []struct {
		name  string
		f     Figure
		reals []float64
		sims  [][]float64
		want  Verdict
	}{
		{"timing: 10 % of a long real mean", timing, []float64{10000, 10000, 10000}, [][]float64{{10990}, {10990}, {10990}}, Agree},
		{"timing: just over 10 %", timing, []float64{10000, 10000, 10000}, [][]float64{{11010}, {11010}, {11010}}, Disagree},
		{"timing: 300 ms floor on a short figure", timing, []float64{400, 400, 400}, [][]float64{{690}, {700}, {700}}, Agree},
		{"timing: 301 ms off a short figure", timing, []float64{400, 400, 400}, [][]float64{{701}, {701}, {701}}, Disagree},
		{"timing: below, the same rule", timing, []float64{5000, 5000, 5000}, [][]float64{{4400}, {4400}, {4400}}, Disagree},
		{"two real repetitions: pending", timing, []float64{5000, 5000}, [][]float64{{5000}, {5000}}, Pending},
		{"no real value, simulated values: one-sided", timing, []float64{nan(), nan(), nan()}, [][]float64{{1}, {1}, {1}}, Disagree},
		{"count: equal in 9 of 10", count, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 2},
			[][]float64{{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}}, Agree},
		{"count: equal in 8 of 10", count, []float64{1, 1, 1, 1, 1, 1, 1, 1, 2, 2},
			[][]float64{{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}}, Disagree},
		{"count: the mode of a repetition's seeds", count, []float64{1, 2, 1}, [][]float64{{1, 1, 2}, {2, 2, 1}, {0, 1, 1}}, Agree},
		{"count: a tie takes the smaller", count, []float64{2, 2, 2}, [][]float64{{1, 2}, {2, 2}, {2, 2}}, Disagree},
		{"partition-s: within 25 %", ps, []float64{40, 40, 40}, [][]float64{{50}, {50}, {50}}, Agree},
		{"partition-s: beyond 25 %", ps, []float64{40, 40, 40}, [][]float64{{50.1}, {50.1}, {50.1}}, Disagree},
		{"partition-s: both zero", ps, []float64{0, 0, 0}, [][]float64{{0}, {0}, {0}}, Agree},
	}
	for _, c := range cases {
		sim, real := runs(c.reals, c.sims)
		row := Judge(c.f, 0, sim, real)
		if row.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, row.Verdict, row.Why, c.want)
		}
	}
	// Pending still says how it stands so far.
	sim, real := runs([]float64{5000}, [][]float64{{9000, 9100}})
	if row := Judge(timing, 0, sim, real); row.Verdict != Pending || !strings.Contains(row.Why, "1 of 3 real repetitions; so far disagree") {
		t.Errorf("one far-off repetition: %s (%s), want pending, so far disagree", row.Verdict, row.Why)
	}
}

// testExplanations is the test suite's explanations file.
func testExplanations(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "explanations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// calibrateInto runs the test suite with the fake runner into out.
func calibrateInto(t *testing.T, ctx context.Context, out string, f *fakeRunner, reps int) error {
	t.Helper()
	_, err := Calibrate(ctx, Options{Suite: testSuite(t), Versions: testVersions, Reps: reps, Seeds: 2, Out: out, Run: f.run,
		Explanations: testExplanations(t), Now: func() time.Time { return time.Unix(0, 0) }})
	return err
}

// files reads every file under dir (paths relative to it), leaving out the
// plots (PNG bytes depend on the font rasteriser, not on calibrate).
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".png") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	for k, v := range a {
		if w, ok := b[k]; !ok {
			t.Errorf("%s: only in the first", k)
		} else if !bytes.Equal(v, w) {
			t.Errorf("%s differs", k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: only in the second", k)
		}
	}
}

// TestResumedEqualsUninterrupted: a suite interrupted after some
// repetitions and run again makes the rest, none twice, and ends with the
// same files as one run through.
func TestResumedEqualsUninterrupted(t *testing.T) {
	whole, parts := t.TempDir(), t.TempDir()
	f := &fakeRunner{}
	if err := calibrateInto(t, context.Background(), whole, f, 3); err != nil {
		t.Fatal(err)
	}
	total := f.calls // 3 reps × (crash, leave on both versions; consumer-crash on 4.4.0)
	if total != 15 {
		t.Fatalf("%d repetitions made, want 15", total)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &fakeRunner{cancelAt: 8, cancel: cancel}
	err := calibrateInto(t, ctx, parts, g, 3)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted run: %v, want ErrInterrupted", err)
	}
	if _, err := os.Stat(filepath.Join(parts, "REPORT.md")); err != nil {
		t.Fatalf("no report of what finished: %v", err)
	}
	h := &fakeRunner{}
	if err := calibrateInto(t, context.Background(), parts, h, 3); err != nil {
		t.Fatal(err)
	}
	if made := g.calls - 1 + h.calls; made != total {
		t.Errorf("%d repetitions made in the two runs (one interrupted), want %d", made, total)
	}
	sameFiles(t, files(t, whole), files(t, parts))
}

// TestFailedRepetitionRetried: a repetition that fails is removed and
// counted, the others are made and reported, and the next run makes it.
func TestFailedRepetitionRetried(t *testing.T) {
	whole, parts := t.TempDir(), t.TempDir()
	if err := calibrateInto(t, context.Background(), whole, &fakeRunner{}, 3); err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{failAt: 4}
	err := calibrateInto(t, context.Background(), parts, f, 3)
	var failed *FailedError
	if !errors.As(err, &failed) || len(failed.Reps) != 1 {
		t.Fatalf("a failed repetition: %v, want a FailedError naming it", err)
	}
	if _, err := os.Stat(filepath.Join(parts, "REPORT.md")); err != nil {
		t.Fatalf("no report of the others: %v", err)
	}
	g := &fakeRunner{}
	if err := calibrateInto(t, context.Background(), parts, g, 3); err != nil {
		t.Fatal(err)
	}
	if g.calls != 1 {
		t.Errorf("the next run made %d repetitions, want the failed one only", g.calls)
	}
	sameFiles(t, files(t, whole), files(t, parts))
}

// TestSimulatedSideDeterministic: evaluating the same repetitions twice
// gives the same report byte for byte.
func TestSimulatedSideDeterministic(t *testing.T) {
	o := Options{Suite: testSuite(t), Versions: testVersions, Seeds: 2, Out: filepath.Join("testdata", "golden")}
	a, err := Evaluate(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Evaluate(o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(valuesCSV(a), valuesCSV(b)) || !bytes.Equal(reportMD(a, nil), reportMD(b, nil)) {
		t.Fatal("two evaluations of the same repetitions differ")
	}
}

// TestGoldenReport: the committed report under testdata/golden is what
// --report-only makes from the committed repetitions there (made by the
// fake runner; -rewrite makes them again).
func TestGoldenReport(t *testing.T) {
	golden := filepath.Join("testdata", "golden")
	if *rewrite {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		if err := calibrateInto(t, context.Background(), golden, &fakeRunner{}, 3); err != nil {
			t.Fatal(err)
		}
		_ = os.RemoveAll(filepath.Join(golden, "plots"))
	}
	out := t.TempDir()
	if err := os.Symlink(mustAbs(t, filepath.Join(golden, "real")), filepath.Join(out, "real")); err != nil {
		t.Fatal(err)
	}
	if _, err := Calibrate(context.Background(), Options{Suite: testSuite(t), Versions: testVersions, Seeds: 2, Out: out, Explanations: testExplanations(t)}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"REPORT.md", "calibration.csv", "values.csv"} {
		want, err := os.ReadFile(filepath.Join(golden, name))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(out, name))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: --report-only does not regenerate the committed file (go test ./calibrate -run TestGoldenReport -rewrite, and review the diff)", name)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCommittedCalibrationRegenerates: the committed report under
// results/calibration (and
// its CSVs) is what --report-only makes from the committed repetitions.
func TestCommittedCalibrationRegenerates(t *testing.T) {
	dir := filepath.Join("..", "results", "calibration")
	want, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Skip("no committed calibration report under results/calibration yet; TestGoldenReport covers --report-only")
	}
	suite, err := LoadSuite("")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.Symlink(mustAbs(t, filepath.Join(dir, "real")), filepath.Join(out, "real")); err != nil {
		t.Fatal(err)
	}
	res, err := Calibrate(context.Background(), Options{Suite: suite, Versions: committedVersions(t, dir), Seeds: committedSeeds(t, want), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	_ = res
	for _, name := range []string{"REPORT.md", "calibration.csv", "values.csv"} {
		want, _ := os.ReadFile(filepath.Join(dir, name))
		got, _ := os.ReadFile(filepath.Join(out, name))
		if !bytes.Equal(got, want) {
			t.Errorf("results/calibration/%s: not what simrun calibrate --report-only makes from the committed repetitions", name)
		}
	}
}

// committedVersions and committedSeeds read the committed report's
// parameters from its first lines (the report names them).
func committedVersions(t *testing.T, dir string) []string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	_, after, ok := strings.Cut(string(b), "broker versions ")
	v, _, ok2 := strings.Cut(after, " (same-line")
	if !ok || !ok2 {
		t.Fatal("the committed calibration report does not name its broker versions")
	}
	return strings.Split(v, ", ")
}

func committedSeeds(t *testing.T, report []byte) int {
	t.Helper()
	_, after, _ := strings.Cut(string(report), "clients); ")
	var n int
	for _, c := range after {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	if n == 0 {
		t.Fatal("the committed calibration report does not name its seeds per repetition")
	}
	return n
}

// TestPlotsFit: every scenario plot's texts fit (no cut title, legend or
// colliding category label).
func TestPlotsFit(t *testing.T) {
	res, err := Evaluate(Options{Suite: testSuite(t), Versions: testVersions, Seeds: 2, Out: filepath.Join("testdata", "golden")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range res.Scenarios {
		fig, err := scenarioPlot(res, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if fig == nil {
			continue
		}
		n++
		for _, p := range report.Problems(fig) {
			t.Errorf("%s: %s", s.Name, p)
		}
	}
	if n == 0 {
		t.Fatal("no plot drawn")
	}
	// Every timing figure's label at once (the widest case) fits too.
	var cats report.Categories
	var series []report.BoxSeries
	for _, f := range Figures {
		if f.Class == Timing {
			cats = append(cats, f.Label)
		}
	}
	for _, name := range []string{"simulated 3.9.1", "real 3.9.1", "simulated 4.4.0", "real 4.4.0"} {
		bs := report.BoxSeries{Name: name, Values: make([][]float64, len(cats))}
		for c := range cats {
			bs.Values[c] = []float64{1, 2, 3}
		}
		series = append(series, bs)
	}
	fig, err := report.Box(report.Style{Title: "cal-coordinator-kill-long-name: simulated and real runs, timing figures", YLabel: "seconds"}, cats, series)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range report.Problems(fig) {
		t.Errorf("every timing figure: %s", p)
	}
}

// TestExplanations: the committed explanations parse; a bad entry is an
// error that names it; an explanation is attached to its disagreement
// only.
func TestExplanations(t *testing.T) {
	if _, err := ParseExplanations("calibrate/explanations.yaml", explanationsYAML); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"- {scenario: crash, figure: no_such_figure, cause: model, measured: 'a long enough measurement text'}",
		"- {scenario: crash, figure: evictions, cause: luck, measured: 'a long enough measurement text'}",
		"- {scenario: crash, figure: evictions, cause: model}",
		"- {scenario: crash, figure: evictions, cause: model, measured: 'a long enough measurement text', extra: 1}",
	} {
		if _, err := ParseExplanations("x.yaml", []byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	ex, _ := ParseExplanations("x.yaml", []byte("- {scenario: crash, figure: evictions, kafka: 3.9.1, cause: testbed, measured: 'a long enough measurement text'}"))
	rows := []Row{
		{Scenario: "crash", Version: "3.9.1", Figure: Figures[figureIndex("evictions")], Verdict: Disagree},
		{Scenario: "crash", Version: "4.4.0", Figure: Figures[figureIndex("evictions")], Verdict: Disagree},
		{Scenario: "crash", Version: "3.9.1", Figure: Figures[figureIndex("leaves")], Verdict: Disagree},
	}
	explain(rows, ex)
	if rows[0].Explanation == nil || rows[1].Explanation != nil || rows[2].Explanation != nil {
		t.Errorf("explanations attached to %v %v %v, want only the first", rows[0].Explanation != nil, rows[1].Explanation != nil, rows[2].Explanation != nil)
	}
	// A pending row that disagrees so far shows its explanation; one that
	// agrees so far does not take it.
	for _, c := range []struct {
		soFar Verdict
		want  bool
	}{{Disagree, true}, {Agree, false}} {
		row := []Row{{Scenario: "crash", Version: "3.9.1", Figure: Figures[figureIndex("evictions")], Verdict: Pending, SoFar: c.soFar}}
		explain(row, ex)
		if (row[0].Explanation != nil) != c.want {
			t.Errorf("pending, so far %s: explained %v, want %v", c.soFar, row[0].Explanation != nil, c.want)
		}
	}
}

// TestMatchFeedsMeasuredFacts: the matched scenario starts each member at
// its measured first JoinGroup with no phase, puts each fault at its
// measured instant with no phase, and runs at the measured latency.
func TestMatchFeedsMeasuredFacts(t *testing.T) {
	s := testSuite(t)
	sc, err := s.Scenarios[0].ForVersion("3.9.1") // consumer-crash: not on 3.9
	if err == nil {
		t.Fatalf("%s parsed on 3.9.1", s.Scenarios[0].Name)
	}
	sc, err = s.Scenarios[1].ForVersion("3.9.1") // crash
	if err != nil {
		t.Fatal(err)
	}
	r := &Rep{N: 1, Real: realFacts{FirstJoinMs: map[string]float64{"payments-0": 812, "payments-2": 900}, LatencyOneWayMs: 0.07,
		BrokerFirstJoinMs: map[string]float64{"payments-2": 1000.5}},
		StartMs: map[string]int64{"payments-1": 100, "payments-3": 150}, FaultAtMs: map[string]int64{faultKey(&sc.Faults[0]): 15321}}
	r.Real.StartToFirstJoinMs.Mean = 500
	m, notes := Match(sc, r)
	want := []time.Duration{812 * time.Millisecond, 600 * time.Millisecond, 1000500 * time.Microsecond, 650 * time.Millisecond}
	if len(m.Groups) != 4 {
		t.Fatalf("%d cohorts, want 4", len(m.Groups))
	}
	for i, g := range m.Groups {
		if g.Members != 1 || g.FirstIndex != i || g.Cohort != i || !g.Start.Exact || g.Start.At != want[i] {
			t.Errorf("cohort %d: %+v, want one member payments-%d at %v, exact", i, g.Start, i, want[i])
		}
	}
	if f := m.Faults[0]; f.At != 15321*time.Millisecond || !f.JitterSet || f.Jitter != 0 {
		t.Errorf("fault at %v (jitter %v set %v), want 15.321s exactly", f.At, f.Jitter, f.JitterSet)
	}
	if m.Network.Latency.Value != 70*time.Microsecond {
		t.Errorf("latency %v, want 70µs", m.Network.Latency.Value)
	}
	if sc.Faults[0].At != 15*time.Second || len(sc.Groups) != 1 {
		t.Error("Match modified its input")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "recorded start plus") {
		t.Errorf("notes %q, want the start fallback named", notes)
	}
}

// TestBuiltinSuitePlans: every scenario of the built-in suite runs on
// each version it applies to as the testbed can make it (a realkafka plan:
// no Java, no root needed to check), with the clients of the broker's line.
func TestBuiltinSuitePlans(t *testing.T) {
	s, err := LoadSuite("")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Scenarios {
		ss := &s.Scenarios[i]
		applies := 0
		for _, v := range []string{"3.9.1", "4.4.0"} {
			sc, err := ss.ForVersion(v)
			if err != nil {
				continue
			}
			applies++
			plan, err := realkafka.NewPlan(sc, v, false)
			if err != nil {
				t.Errorf("%s on %s: %v", ss.Name, v, err)
				continue
			}
			for _, m := range plan.Members {
				if !strings.HasPrefix(m.ClientVersion, v[:3]) {
					t.Errorf("%s on %s: member %s runs client %s", ss.Name, v, m.Name, m.ClientVersion)
					break
				}
			}
		}
		if applies == 0 {
			t.Errorf("%s applies to no version", ss.Name)
		}
	}
}

// TestFigureDefinitions: the figures calibrate defines itself, from a
// hand-made summary: an initial join in two episodes (a first member alone,
// then the rest), a crash at 15 s, its eviction at 24.9 s, a failover.
func TestFigureDefinitions(t *testing.T) {
	s := &harness.Summary{Groups: []harness.GroupSummary{{
		FirstFaultMs: 15000,
		Rebalances: []harness.Rebalance{
			{StartMs: 100, EndMs: 180, DurationMs: 80},
			{StartMs: 900, EndMs: 6400, DurationMs: 5500},
			{StartMs: 24900, EndMs: 27100, DurationMs: 2200},
		},
		Failovers: []harness.Failover{{AtMs: 23900, RecoveryMs: 900}},
	}}}
	x := &extras{noticeMs: []float64{9950, 9900, 12000}}
	v := figureValues(nil, s, x)
	want := map[string]float64{
		"initial_join_ms":        6400,
		"fault_to_rebalance_ms":  9900,
		"fault_rebalance_ms":     2200,
		"settled_after_fault_ms": 12100,
		"fault_to_failover_ms":   8900,
		"failover_recovery_ms":   900,
		"notice_spread_ms":       2100,
	}
	for name, w := range want {
		if got := v[figureIndex(name)]; got != w {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
	// An initial join still open at the fault has no value.
	s.Groups[0].Rebalances[1].EndMs = 15500
	if got := figureValues(nil, s, nil)[figureIndex("initial_join_ms")]; !math.IsNaN(got) {
		t.Errorf("initial_join_ms = %v for a join that ran into the fault, want none", got)
	}
}

// TestMatchJoinAndPrepare: a join fault's JVM started ahead ("prepare") is
// not the fault's instant; the joining member starts at its measured first
// JoinGroup.
func TestMatchJoinAndPrepare(t *testing.T) {
	src := `name: j
duration: 30s
topics: [{name: orders, partitions: 6}]
groups: [{id: payments, members: 2, subscribe: [orders]}]
faults: [{at: 15s, join: payments}]
`
	sc, err := scenario.Parse("j.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := faultKey(&sc.Faults[0])
	lines := `{"at_ms":0,"ts_ms":1000,"done_ms":1000,"kind":"start","target":"payments-0","fault":"start"}
{"at_ms":0,"ts_ms":1000,"done_ms":1012,"kind":"prepare","target":"payments-2","fault":"` + key + `"}
{"at_ms":15000,"ts_ms":17000,"done_ms":17001,"kind":"start","target":"payments-2","fault":"` + key + `"}
`
	for name, data := range map[string]string{
		"faults.jsonl": lines,
		"meta.json":    `{"t0_ms": 1000}`,
		"summary.json": `{"groups": [], "real": {"first_join_ms": {"payments-0": 250, "payments-1": 260, "payments-2": 16420}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := readRep(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.FaultAtMs[key] != 16001 {
		t.Errorf("join fault at %d ms, want 16001 (its start's go, not the prepare)", r.FaultAtMs[key])
	}
	m, _ := Match(sc, r)
	if m.Faults[0].At != 16420*time.Millisecond {
		t.Errorf("the joining member starts at %v, want its first JoinGroup 16.42s", m.Faults[0].At)
	}
	if made := faultsAsMade(sc, r); len(made) != 1 || made[16420] != 16001 {
		t.Errorf("fault as made %v, want the join counted from its go (16420 → 16001)", made)
	}
	// A broker-side first join after the first fault is another join (a
	// migration's): the member starts at its own first JoinGroup.
	r.Real.BrokerFirstJoinMs = map[string]float64{"payments-1": 17500, "payments-0": 240}
	m, _ = Match(sc, r)
	if m.Groups[1].Start.At != 260*time.Millisecond || m.Groups[0].Start.At != 240*time.Millisecond {
		t.Errorf("starts %v, %v; want 240ms (the broker's) and 260ms (a broker instant after the fault ignored)", m.Groups[0].Start.At, m.Groups[1].Start.At)
	}
	if m.Groups[1].Start.At != 260*time.Millisecond {
		t.Errorf("payments-1 starts at %v, want 260ms", m.Groups[1].Start.At)
	}
}

// TestPhaseShift: the simulated fault moves to the phase of the simulated
// heartbeat cycle at which the real fault fell in the real one. Numbers of
// cal-crash-s10 repetition 2 on 3.9.1: the crash of payments-2 at 15.241 s
// came 2.962 s after its last real heartbeat (12.279 s), while four others
// had just sent theirs (15.204–15.237 s); the simulated members heartbeat
// at 15.138–15.208 s. The crashed member's own cycle decides: the simulated
// crash goes 141 ms earlier, to 15.100 s, 2.962 s after payments-2's
// simulated 12.138 s heartbeat. Without a target the members' shifts are
// averaged after each is wrapped into half an interval: a member whose
// heartbeat came just after the fault does not count 2.9 s.
func TestPhaseShift(t *testing.T) {
	real := map[string]float64{"payments-0": 15234, "payments-1": 12235, "payments-2": 12279, "payments-3": 15204, "payments-4": 15237, "payments-5": 15223}
	sim := map[string]float64{"payments-0": 15207.5, "payments-1": 15159.5, "payments-2": 15137.9, "payments-3": 15151.9, "payments-4": 15165.2, "payments-5": 15186.1}
	if d, n, ok := phaseShift(real, sim, 3*time.Second, "payments-2"); !ok || n != 1 || d != -141*time.Millisecond {
		t.Errorf("target's shift %v over %d (ok %v), want -141ms from payments-2 alone", d, n, ok)
	}
	if d, n, ok := phaseShift(real, sim, 3*time.Second, ""); !ok || n != 6 || d != -67*time.Millisecond {
		t.Errorf("mean shift %v over %d (ok %v), want -67ms over 6 (each wrapped first; unwrapped it is +933ms)", d, n, ok)
	}
	if d, _, _ := phaseShift(map[string]float64{"a": 1000}, map[string]float64{"a": 1400}, 3*time.Second, "b"); d != 400*time.Millisecond {
		t.Errorf("shift %v, want 400ms (a target without heartbeats: the mean)", d)
	}
	if _, _, ok := phaseShift(map[string]float64{"a": 1000}, map[string]float64{"b": 1400}, 3*time.Second, ""); ok {
		t.Error("a shift without a member on both sides")
	}
}

// TestMatchFeedsHeartbeatCadence: a repetition's measured heartbeat cadence
// becomes each classic member's wait overshoot (HeartbeatThread.run's
// ceil(interval/backoff) waits between heartbeats, hbgrid.go): 3014.2 ms at
// 3 s / 100 ms is 30 waits 0.473 ms late each; a scenario that writes its
// own wait.overshoot, or a repetition without the measurement, keeps it.
func TestMatchFeedsHeartbeatCadence(t *testing.T) {
	src := `name: hb
duration: 30s
topics: [{name: orders, partitions: 6}]
groups: [{id: payments, members: 2, subscribe: [orders], client: {heartbeat.interval.ms: 3000, retry.backoff.ms: 100}}]
`
	sc, err := scenario.Parse("hb.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := &Rep{N: 1, Real: realFacts{HeartbeatGapMs: []byte("3014.2")}}
	m, notes := Match(sc, r)
	for i, g := range m.Groups {
		if !g.Workload.WaitOvershootSet || g.Workload.WaitOvershoot != 473*time.Microsecond {
			t.Errorf("cohort %d: wait.overshoot %v (set %v), want 473µs", i, g.Workload.WaitOvershoot, g.Workload.WaitOvershootSet)
		}
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "heartbeat cadence:") }) {
		t.Errorf("notes %q do not say the cadence was fed", notes)
	}
	m, _ = Match(sc, &Rep{N: 1})
	if g := m.Groups[0]; g.Workload.WaitOvershootSet {
		t.Errorf("no measurement: wait.overshoot set to %v", g.Workload.WaitOvershoot)
	}
	written := *sc
	written.Groups = slices.Clone(sc.Groups)
	written.Groups[0].Workload.WaitOvershoot, written.Groups[0].Workload.WaitOvershootSet = time.Millisecond, true
	m, _ = Match(&written, r)
	if g := m.Groups[0]; g.Workload.WaitOvershoot != time.Millisecond {
		t.Errorf("written wait.overshoot 1ms replaced by %v", g.Workload.WaitOvershoot)
	}
}

// TestMatchFeedsDriverSeeds: a repetition's driver seed of each process
// incarnation (meta.json driver_seeds, "member.inc"; a restarted process
// has its own) becomes the matched scenario's DriverSeeds, which the
// harness replays the classic members' workload draws from
// (harness/replay.go), with a note counting the classic and the
// consumer-protocol incarnations, and each replayed incarnation's measured
// wait for its first records becomes FirstRecords; a repetition without
// seeds feeds neither, and the written scenario is not changed.
func TestMatchFeedsDriverSeeds(t *testing.T) {
	src := `name: ds
duration: 30s
coordinator: {profile: kafka-4.0}
topics: [{name: orders, partitions: 6}]
groups:
  - {id: payments, members: 2, subscribe: [orders]}
  - {id: payments-kip848, members: 1, subscribe: [orders], client: {profile: kafka-4.0, group.protocol: consumer}}
faults: [{at: 10s, crash: payments-1, for: 2s}]
`
	sc, err := scenario.Parse("ds.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string]int64{"payments-0.1": 11, "payments-1.1": 22, "payments-1.2": 33, "payments-kip848-0.1": 44}
	r := &Rep{N: 1, Meta: realkafka.Meta{DriverSeeds: seeds, T0Ms: 1_000_000},
		FirstRecords: map[string]realkafka.FirstRecords{"payments-0.1": {AssignedMs: 1_000_100, RecordsMs: 1_000_352}, "payments-1.2": {AssignedMs: 1_014_000, RecordsMs: 1_014_031},
			"payments-kip848-0.1": {AssignedMs: 1_000_100, RecordsMs: 1_000_280}, "payments-7.1": {AssignedMs: 1_000_100, RecordsMs: 1_000_105}}}
	m, notes := Match(sc, r)
	if !maps.Equal(m.DriverSeeds, seeds) {
		t.Errorf("DriverSeeds %v, want %v", m.DriverSeeds, seeds)
	}
	// Only a replayed (classic, seeded) incarnation's wait is fed.
	wantFirst := map[string]time.Duration{"payments-0.1": 252 * time.Millisecond, "payments-1.2": 31 * time.Millisecond}
	if !maps.Equal(m.FirstRecords, wantFirst) {
		t.Errorf("FirstRecords %v, want %v", m.FirstRecords, wantFirst)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "first records: 2 replayed incarnation(s)") }) {
		t.Errorf("notes %q do not say the first-records waits were fed", notes)
	}
	seeds["payments-0.1"] = 99
	if m.DriverSeeds["payments-0.1"] != 11 {
		t.Error("the matched scenario shares the repetition's map")
	}
	want := "workload draws: 3 classic process incarnation(s) replay their driver's poll.interval/poll.timeout/callback.time draws from their own seed (meta.json driver_seeds); 1 consumer-protocol incarnation(s) draw from their stream (the model has no per-poll loop to replay)"
	if !slices.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	if sc.DriverSeeds != nil {
		t.Errorf("the written scenario got seeds %v", sc.DriverSeeds)
	}
	m, notes = Match(sc, &Rep{N: 1, Meta: realkafka.Meta{T0Ms: 1_000_000}, FirstRecords: map[string]realkafka.FirstRecords{"payments-0.1": {AssignedMs: 1_000_100, RecordsMs: 1_000_352}}})
	if m.DriverSeeds != nil || m.FirstRecords != nil {
		t.Errorf("no seeds recorded: DriverSeeds %v, FirstRecords %v", m.DriverSeeds, m.FirstRecords)
	}
	if slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "workload draws:") }) {
		t.Errorf("no seeds recorded: notes %q", notes)
	}
}

// TestMatchFeedsJoinCosts: a repetition's measured classic join costs
// become the matched scenario's workload assign.time (every classic
// cohort; the leader's assignor run) and the coordinator's append.latency
// (the group record's append), each the repetition's mean as a constant in
// whole microseconds, with a note each; a scenario that writes its own
// keeps it, a repetition without the measurement feeds nothing, a
// consumer-protocol group gets no assign.time, and a Java coordinator's
// fixed append linger (4.0–4.1: 5 ms), which the model adds itself, is
// taken off the append.
func TestMatchFeedsJoinCosts(t *testing.T) {
	src := `name: jc
duration: 30s
topics: [{name: orders, partitions: 6}]
groups: [{id: payments, members: 2, subscribe: [orders]}]
`
	sc, err := scenario.Parse("jc.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := &Rep{N: 1, Real: realFacts{
		AssignMs:     &realkafka.JoinCost{Mean: 52.95, N: 2, Values: []float64{61.9, 44}},
		SyncAppendMs: &realkafka.JoinCost{Mean: 28.95, N: 2, Values: []float64{52.95, 4.95}},
	}}
	m, notes := Match(sc, r)
	if len(m.Groups) != 2 {
		t.Fatalf("%d cohorts, want 2", len(m.Groups))
	}
	for i, g := range m.Groups {
		if want := (scenario.Dist{Kind: scenario.DistConstant, Value: 52950 * time.Microsecond}); !g.Workload.AssignTimeSet || g.Workload.AssignTime != want {
			t.Errorf("cohort %d: assign.time %+v (set %v), want a constant 52.95ms", i, g.Workload.AssignTime, g.Workload.AssignTimeSet)
		}
	}
	if want := (scenario.Dist{Kind: scenario.DistConstant, Value: 28950 * time.Microsecond}); !m.Coordinator.AppendLatencySet || m.Coordinator.AppendLatency != want {
		t.Errorf("append.latency %+v (set %v), want a constant 28.95ms", m.Coordinator.AppendLatency, m.Coordinator.AppendLatencySet)
	}
	for _, p := range []string{"assignment: measured 52.95 ms (2 generation(s)) as assign.time", "sync append: measured 28.95 ms (2 generation(s)) as the coordinator's append.latency 28.95ms"} {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, p) }) {
			t.Errorf("notes %q do not say %q", notes, p)
		}
	}
	if sc.Groups[0].Workload.AssignTimeSet || sc.Coordinator.AppendLatencySet {
		t.Error("Match modified the scenario")
	}

	m, notes = Match(sc, &Rep{N: 1})
	if g := m.Groups[0]; g.Workload.AssignTimeSet || m.Coordinator.AppendLatencySet {
		t.Errorf("no measurement: assign.time %+v, append.latency %+v fed", g.Workload.AssignTime, m.Coordinator.AppendLatency)
	}
	if slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "assignment:") || strings.HasPrefix(n, "sync append:")
	}) {
		t.Errorf("no measurement, notes %q", notes)
	}

	written, err := scenario.Parse("jc.yaml", []byte(`name: jc
duration: 30s
coordinator: {profile: kafka-4.4, append.latency: 0ms}
topics: [{name: orders, partitions: 6}]
groups:
  - {id: payments, members: 1, subscribe: [orders], client: {profile: kafka-4.4}, workload: {assign.time: 7ms}}
  - {id: payments, members: 1, subscribe: [orders], client: {profile: kafka-4.4, group.protocol: consumer}}
`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ = Match(written, r)
	if g := m.Groups[0]; g.Workload.AssignTime.Value != 7*time.Millisecond {
		t.Errorf("written assign.time 7ms replaced by %+v", g.Workload.AssignTime)
	}
	if g := m.Groups[1]; g.Workload.AssignTimeSet {
		t.Errorf("consumer-protocol cohort given assign.time %+v", g.Workload.AssignTime)
	}
	if m.Coordinator.AppendLatency.Value != 0 {
		t.Errorf("written append.latency 0ms replaced by %+v", m.Coordinator.AppendLatency)
	}

	linger, err := scenario.Parse("jc.yaml", []byte(`name: jc
duration: 30s
coordinator: {profile: kafka-4.0}
topics: [{name: orders, partitions: 6}]
groups: [{id: payments, members: 1, subscribe: [orders], client: {profile: kafka-4.0}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if linger.Coordinator.AppendLinger != 5*time.Millisecond {
		t.Fatalf("kafka-4.0 append linger %v, want 5ms", linger.Coordinator.AppendLinger)
	}
	m, _ = Match(linger, r)
	if m.Coordinator.AppendLatency.Value != 23950*time.Microsecond {
		t.Errorf("append.latency %v under a 5ms linger, want 23.95ms", m.Coordinator.AppendLatency.Value)
	}
}

// TestMatchedSeedsAreDistinctPerRepetition: the matched runs of different
// repetitions draw from different seeds (with seeds 1..N for every
// repetition, one long processing step of seed k appeared once per
// repetition, and the runs were not independent).
func TestMatchedSeedsAreDistinctPerRepetition(t *testing.T) {
	const seeds = 3
	seen := map[int]string{}
	for rep := 1; rep <= 5; rep++ {
		for k := 1; k <= seeds; k++ {
			s := matchedSeed(rep, k, seeds)
			if s < 1 {
				t.Fatalf("rep %d run %d: seed %d < 1", rep, k, s)
			}
			if prev, ok := seen[s]; ok {
				t.Fatalf("rep %d run %d: seed %d already used by %s", rep, k, s, prev)
			}
			seen[s] = "rep " + strconv.Itoa(rep) + " run " + strconv.Itoa(k)
		}
	}
	if got := matchedSeed(1, 1, seeds); got != 1 {
		t.Fatalf("repetition 1's first seed is %d, want 1 (the unmatched runs' first)", got)
	}
}

// TestMatchFeedsConsumerCosts: a repetition's measured consumer-coordinator
// costs become the matched scenario's consumer.first.target.time (the
// first member's first heartbeat, else the first assignor run),
// consumer.assign.time (the later runs' mean) and
// consumer.first.append.latency (the first answer's commit), with a note;
// consumer.append.latency is not fed; a scenario that writes its own costs
// keeps them, a classic one gets none.
func TestMatchFeedsConsumerCosts(t *testing.T) {
	src := `name: cc
duration: 30s
coordinator: {profile: kafka-4.4}
topics: [{name: orders, partitions: 6}]
groups: [{id: payments, members: 2, subscribe: [orders], client: {profile: kafka-4.4, group.protocol: consumer}}]
`
	sc, err := scenario.Parse("cc.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// cal-consumer-crash 4.4.0 rep 1's.
	r := &Rep{N: 1, Real: realFacts{
		ConsumerFirstAssignMs:    &realkafka.JoinCost{Mean: 142, N: 1, Values: []float64{142}},
		ConsumerAssignMs:         &realkafka.JoinCost{Mean: 0.5, N: 2, Values: []float64{0, 1}},
		ConsumerFirstHeartbeatMs: &realkafka.JoinCost{Mean: 785, N: 1, Values: []float64{785}},
		ConsumerFirstAnswerMs:    &realkafka.JoinCost{Mean: 2110.95, N: 1, Values: []float64{2110.95}},
	}}
	m, notes := Match(sc, r)
	c := m.Coordinator
	want := []time.Duration{785 * time.Millisecond, 500 * time.Microsecond, 2110950 * time.Microsecond, 0}
	got := []time.Duration{c.ConsumerFirstTargetTime, c.ConsumerAssignTime, c.ConsumerFirstAppendLatency, c.ConsumerAppendLatency}
	if !slices.Equal(got, want) {
		t.Errorf("first target, assign, first append, append = %v, want %v", got, want)
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "consumer coordinator: measured 785 ms as consumer.first.target.time")
	}) {
		t.Errorf("notes %q do not say the consumer costs were fed", notes)
	}
	if sc.Coordinator.ConsumerFirstTargetTime != 0 {
		t.Error("Match modified the scenario")
	}
	// Without the first heartbeat (a migration): the first assignor run.
	r2 := *r
	r2.Real.ConsumerFirstHeartbeatMs = nil
	if m, _ := Match(sc, &r2); m.Coordinator.ConsumerFirstTargetTime != 142*time.Millisecond {
		t.Errorf("first target %v, want the first assignor run 142ms", m.Coordinator.ConsumerFirstTargetTime)
	}
	// A classic group that a rolling restart moves to the consumer
	// protocol (cal-migration) is fed; a classic one that stays is not.
	mig := strings.Replace(src, ", group.protocol: consumer}", "}", 1)
	classic, err := scenario.Parse("cc.yaml", []byte(mig))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := Match(classic, r); m.Coordinator.ConsumerFirstTargetTime != 0 {
		t.Errorf("classic scenario fed consumer costs: %v", m.Coordinator.ConsumerFirstTargetTime)
	}
	moved, err := scenario.Parse("cc.yaml", []byte(mig+"faults: [{at: 10s, rolling-restart: payments, interval: 1s, downtime: 1s, set: {group.protocol: consumer}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := Match(moved, r); m.Coordinator.ConsumerFirstTargetTime != 785*time.Millisecond {
		t.Errorf("migrating scenario: first target %v, want 785ms", m.Coordinator.ConsumerFirstTargetTime)
	}
	// Written costs are kept; nothing measured feeds nothing.
	written, err := scenario.Parse("cc.yaml", []byte(strings.Replace(src, "profile: kafka-4.4}", "profile: kafka-4.4, consumer.append.latency: 3ms}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := Match(written, r); m.Coordinator.ConsumerFirstTargetTime != 0 || m.Coordinator.ConsumerAppendLatency != 3*time.Millisecond {
		t.Errorf("written costs replaced: %+v", m.Coordinator)
	}
	if m, notes := Match(sc, &Rep{N: 1}); m.Coordinator.ConsumerFirstTargetTime != 0 || slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "consumer coordinator") }) {
		t.Errorf("nothing measured, yet fed: %v", notes)
	}
}
