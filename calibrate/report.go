package calibrate

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
)

// Write writes REPORT.md, calibration.csv, values.csv and plots/NAME.png
// under out, each file atomically.
func Write(res *Result, out string) error {
	if err := os.MkdirAll(filepath.Join(out, "plots"), 0o755); err != nil {
		return err
	}
	plots, err := writePlots(res, filepath.Join(out, "plots"))
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{"REPORT.md", reportMD(res, plots)},
		{"calibration.csv", calibrationCSV(res)},
		{"values.csv", valuesCSV(res)},
	}
	for _, f := range files {
		if err := atomicfile.WriteFile(filepath.Join(out, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// Tally counts a class's verdicts.
type Tally struct {
	Agree, Explained, Unexplained, Pending int
	// Of the pending rows with real repetitions, how many agree and
	// disagree so far.
	SoFarAgree, SoFarDisagree int
}

// Judged is the number of rows with a verdict.
func (t Tally) Judged() int { return t.Agree + t.Explained + t.Unexplained }

// Tallies counts the verdicts per class, over the versions given ("" for
// all).
func (res *Result) Tallies(version string) [3]Tally {
	var t [3]Tally
	for _, s := range res.Scenarios {
		if version != "" && s.Version != version {
			continue
		}
		for _, r := range s.Rows {
			c := &t[r.Figure.Class]
			switch {
			case r.Verdict == Agree:
				c.Agree++
			case r.Verdict == Pending:
				c.Pending++
				switch r.SoFar {
				case Agree:
					c.SoFarAgree++
				case Disagree:
					c.SoFarDisagree++
				}
			case r.Explanation != nil:
				c.Explained++
			default:
				c.Unexplained++
			}
		}
	}
	return t
}

// format writes a figure's value in its unit for a person: timings in
// seconds.
func format(f Figure, x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	if math.IsInf(x, 0) {
		return "∞"
	}
	if f.Unit == "ms" {
		return experiments.FormatShort(x/1000) + " s"
	}
	return experiments.FormatShort(x)
}

func formatEst(f Figure, e experiments.Estimate) string {
	if e.N == 0 {
		return "–"
	}
	s := format(f, e.Value)
	if !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi) {
		lo, hi := format(f, e.Lo), format(f, e.Hi)
		if f.Unit == "ms" {
			lo, hi = strings.TrimSuffix(lo, " s"), strings.TrimSuffix(hi, " s")
		}
		s += " [" + lo + ", " + hi + "]"
	}
	return s + fmt.Sprintf(" (n=%d)", e.N)
}

func (r *Row) verdictText() string {
	switch {
	case r.Verdict == Disagree && r.Explanation != nil:
		return "disagree, explained (" + r.Explanation.Cause + ")"
	case r.Verdict == Disagree:
		return "**disagree, UNEXPLAINED**"
	case r.SoFar == Disagree && r.Explanation != nil:
		return "pending (so far disagree, explained: " + r.Explanation.Cause + ")"
	case r.SoFar != "":
		return "pending (so far " + string(r.SoFar) + ")"
	}
	return string(r.Verdict)
}

func reportMD(res *Result, plots map[string]string) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Calibration: the simulator against real Kafka\n\n")
	p("Suite: %s; broker versions %s (same-line clients); %d simulated seeds per real repetition, each matched to it (the measured latency, member starts, fault instants and heartbeat phases, heartbeat cadence, join costs and consumer-coordinator costs, and each classic member's replayed driver draws: docs/CALIBRATE.md). Made by `simrun calibrate`; docs/CALIBRATE.md says what each column means.\n\n",
		res.Suite, strings.Join(res.Versions, ", "), res.Seeds)
	p("Tolerance: timing figures agree when the simulated mean is within 10 %% or 300 ms, whichever is larger, of the real mean; counts when they are equal in at least 90 %% of the real repetitions; partition-seconds within 25 %%. A row needs %d real repetitions, else it is pending.\n\n", MinRealReps)
	p("## Agreement by class\n\n")
	p("| Kafka | class | agree | disagree, explained | disagree, UNEXPLAINED | pending (so far agree / disagree) | agree, of judged |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, v := range append(append([]string{}, res.Versions...), "") {
		t := res.Tallies(v)
		name := v
		if v == "" {
			name = "all"
		}
		for c := Timing; c <= PartitionSeconds; c++ {
			x := t[c]
			share := "–"
			if x.Judged() > 0 {
				share = fmt.Sprintf("%.0f %%", 100*float64(x.Agree)/float64(x.Judged()))
			}
			p("| %s | %s | %d | %d | %d | %d (%d / %d) | %s |\n", name, c, x.Agree, x.Explained, x.Unexplained, x.Pending, x.SoFarAgree, x.SoFarDisagree, share)
		}
	}
	p("\n## Disagreements\n\n")
	n := 0
	for _, s := range res.Scenarios {
		for i := range s.Rows {
			r := &s.Rows[i]
			if r.Verdict != Disagree {
				continue
			}
			n++
			p("- %s on %s, %s: simulated %s, real %s (%s). ", s.Name, s.Version, r.Figure.Name, format(r.Figure, r.Sim.Value), format(r.Figure, r.Real.Value), r.Why)
			if r.Explanation != nil {
				p("Cause: %s. %s\n", r.Explanation.Cause, strings.TrimSpace(r.Explanation.Measured))
			} else {
				p("**UNEXPLAINED**: no entry in calibrate/explanations.yaml.\n")
			}
		}
	}
	if n == 0 {
		p("None.\n")
	}
	first := true
	for _, s := range res.Scenarios {
		for i := range s.Rows {
			r := &s.Rows[i]
			if r.SoFar != Disagree {
				continue
			}
			if first {
				p("\nGaps so far, in rows still pending (fewer than %d real repetitions):\n\n", MinRealReps)
				first = false
			}
			p("- %s on %s, %s: simulated %s, real %s (%s). ", s.Name, s.Version, r.Figure.Name, format(r.Figure, r.Sim.Value), format(r.Figure, r.Real.Value), r.Why)
			if r.Explanation != nil {
				p("Cause: %s. %s\n", r.Explanation.Cause, strings.TrimSpace(r.Explanation.Measured))
			} else {
				p("Not explained yet.\n")
			}
		}
	}
	if len(res.Unused) > 0 {
		p("\n**Explanations that match no disagreement** (stale; remove or correct them):\n\n")
		for _, e := range res.Unused {
			k := e.Kafka
			if k == "" {
				k = "every version"
			}
			p("- %s, %s (%s)\n", e.Scenario, e.Figure, k)
		}
	}
	p("\n## Scenarios\n")
	last := ""
	for _, s := range res.Scenarios {
		if s.Name != last {
			p("\n### %s\n", s.Name)
			if png := plots[s.Name]; png != "" {
				p("\n![%s: simulated and real](%s)\n", s.Name, png)
			}
			last = s.Name
		}
		p("\n**Kafka %s**", s.Version)
		if s.NotApplicable != "" {
			p(": not applicable (%s).\n", s.NotApplicable)
			continue
		}
		p(": %d real repetitions, %d simulated runs.", len(s.Reps), len(s.Sim))
		if s.NotOnTestbed != "" {
			p(" **The testbed cannot make it**: %s.", s.NotOnTestbed)
		}
		if f := testbedFacts(&s); f != "" {
			p(" Testbed: %s.", f)
		}
		for _, note := range s.Notes {
			p(" Matched: %s.", note)
		}
		p("\n\n| figure | simulated mean [95 %%] | real mean [95 %%] | difference | verdict |\n|---|---|---|---|---|\n")
		for i := range s.Rows {
			r := &s.Rows[i]
			diff := "–"
			if r.Sim.N > 0 && r.Real.N > 0 {
				diff = format(r.Figure, r.Diff)
			}
			p("| %s | %s | %s | %s | %s |\n", r.Figure.Name, formatEst(r.Figure, r.Sim), formatEst(r.Figure, r.Real), diff, r.verdictText())
		}
	}
	p("\n## Figures\n\n")
	for _, f := range Figures {
		p("- `%s` (%s): %s.\n", f.Name, f.Class, f.Doc)
	}
	return b.Bytes()
}

// testbedFacts summarises the repetitions' measured set-up: versions,
// start → first JoinGroup, timeline lateness, heartbeat cadence.
func testbedFacts(s *ScenarioResult) string {
	if len(s.Reps) == 0 {
		return ""
	}
	var join, late, gap []float64
	clients := ""
	for _, r := range s.Reps {
		join = append(join, r.Real.StartToFirstJoinMs.Mean)
		late = append(late, r.Real.TimelineLateMs.Mean)
		if g := r.Real.heartbeatGap(); !math.IsNaN(g) {
			gap = append(gap, g)
		}
		if clients == "" && len(r.Meta.Groups) > 0 {
			clients = r.Meta.ClientVersions[r.Meta.Groups[0].ID]
		}
	}
	mean := func(xs []float64) string {
		e := experiments.FigureInterval(experiments.KindMean, 0, xs, nil)
		return experiments.FormatShort(e.Value)
	}
	out := []string{}
	if clients != "" {
		out = append(out, "clients "+clients)
	}
	out = append(out, "start → first JoinGroup "+mean(join)+" ms", "timeline lateness "+mean(late)+" ms")
	if len(gap) > 0 {
		out = append(out, "heartbeat gap "+mean(gap)+" ms (fed to each matched run as its wait.overshoot)")
	}
	return strings.Join(out, ", ")
}

func num(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 8, 64)
}

func writeCSV(rows [][]string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.WriteAll(rows) // a bytes.Buffer does not fail
	return b.Bytes()
}

func calibrationCSV(res *Result) []byte {
	rows := [][]string{{"scenario", "kafka", "figure", "class", "unit", "sim_n", "sim_mean", "sim_ci95_lo", "sim_ci95_hi",
		"real_reps", "real_n", "real_mean", "real_ci95_lo", "real_ci95_hi", "difference", "verdict", "why", "cause", "measured"}}
	for _, s := range res.Scenarios {
		for _, r := range s.Rows {
			cause, measured := "", ""
			if r.Explanation != nil {
				cause, measured = r.Explanation.Cause, strings.TrimSpace(r.Explanation.Measured)
			} else if r.Verdict == Disagree || r.SoFar == Disagree {
				cause = "UNEXPLAINED"
			}
			rows = append(rows, []string{s.Name, s.Version, r.Figure.Name, r.Figure.Class.String(), r.Figure.Unit,
				strconv.Itoa(r.Sim.N), num(r.Sim.Value), num(r.Sim.Lo), num(r.Sim.Hi),
				strconv.Itoa(r.RealReps), strconv.Itoa(r.Real.N), num(r.Real.Value), num(r.Real.Lo), num(r.Real.Hi),
				num(r.Diff), string(r.Verdict), r.Why, cause, measured})
		}
	}
	return writeCSV(rows)
}

func valuesCSV(res *Result) []byte {
	rows := [][]string{{"scenario", "kafka", "side", "rep", "seed", "figure", "value"}}
	for _, s := range res.Scenarios {
		for side, runs := range [][]Run{s.Sim, s.Real} {
			name := []string{"simulated", "real"}[side]
			for _, r := range runs {
				for fi, f := range Figures {
					if math.IsNaN(r.Values[fi]) {
						continue
					}
					rows = append(rows, []string{s.Name, s.Version, name, strconv.Itoa(r.Rep), strconv.FormatUint(r.Seed, 10), f.Name, num(r.Values[fi])})
				}
			}
		}
	}
	return writeCSV(rows)
}

// scenarioPlot draws one scenario's timing figures (seconds) as box plots,
// the simulated and the real distribution side by side per version; a
// scenario without timing figures gets its partition-seconds. nil when
// there is nothing to draw.
func scenarioPlot(res *Result, name string) (report.Figure, error) {
	var parts []ScenarioResult
	for _, s := range res.Scenarios {
		if s.Name == name && s.NotApplicable == "" {
			parts = append(parts, s)
		}
	}
	for _, class := range []Class{Timing, PartitionSeconds} {
		var cats report.Categories
		var idx []int
		for fi, f := range Figures {
			if f.Class != class {
				continue
			}
			has := false
			for _, s := range parts {
				for _, r := range append(append([]Run{}, s.Sim...), s.Real...) {
					has = has || !math.IsNaN(r.Values[fi])
				}
			}
			if has {
				cats = append(cats, f.Label)
				idx = append(idx, fi)
			}
		}
		if len(cats) == 0 {
			continue
		}
		var series []report.BoxSeries
		for _, s := range parts {
			for side, runs := range [][]Run{s.Sim, s.Real} {
				bs := report.BoxSeries{Name: []string{"simulated ", "real "}[side] + s.Version, Values: make([][]float64, len(idx)), ColourMedian: true}
				for c, fi := range idx {
					for _, r := range runs {
						if v := r.Values[fi]; !math.IsNaN(v) {
							if class == Timing {
								v /= 1000
							}
							bs.Values[c] = append(bs.Values[c], v)
						}
					}
				}
				n := 0
				for _, v := range bs.Values {
					n += len(v)
				}
				if n > 0 { // no legend entry for a side without a value (no repetition yet)
					series = append(series, bs)
				}
			}
		}
		st := report.Style{Title: name + ": simulated and real runs, timing figures", YLabel: "seconds"}
		if class == PartitionSeconds {
			st.Title, st.YLabel = name+": simulated and real runs, ownership", "partition-seconds"
		}
		return report.Box(st, cats, series)
	}
	return nil, nil
}

// writePlots writes plots/NAME.png per scenario and returns the relative
// paths by scenario.
func writePlots(res *Result, dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range res.Scenarios {
		if _, done := out[s.Name]; done {
			continue
		}
		out[s.Name] = ""
		fig, err := scenarioPlot(res, s.Name)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", s.Name, err)
		}
		if fig == nil {
			continue
		}
		png, err := report.Render(fig, "png")
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", s.Name, err)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, s.Name+".png"), png); err != nil {
			return nil, err
		}
		out[s.Name] = "plots/" + s.Name + ".png"
	}
	return out, nil
}
