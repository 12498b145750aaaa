package experiments

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/scenario"
)

// CompareSide is one configuration of a comparison: a scenario (its bytes
// with any overrides applied) and the name it is shown under.
type CompareSide struct {
	Name   string
	Source string
	Data   []byte
}

// FigureComparison is one figure of A and B on the same seeds.
type FigureComparison struct {
	Figure string `json:"figure"`
	A      Num    `json:"a"`
	ALo    Num    `json:"a_ci95_lo"`
	AHi    Num    `json:"a_ci95_hi"`
	B      Num    `json:"b"`
	BLo    Num    `json:"b_ci95_lo"`
	BHi    Num    `json:"b_ci95_hi"`
	// Diff is the mean of the paired differences B − A over the seeds
	// where both runs have a value, with its Student-t interval (paired
	// t); Pairs counts those seeds.
	Diff   Num `json:"diff"`
	DiffLo Num `json:"diff_ci95_lo"`
	DiffHi Num `json:"diff_ci95_hi"`
	Pairs  int `json:"pairs"`
	// Distinguishable: the interval of the difference excludes 0.
	Distinguishable bool   `json:"distinguishable"`
	Interval        string `json:"interval"` // of A and B
	a, b            Estimate
}

// EqualInEveryRun: A and B gave the same value on every paired seed (the
// compare table hides such a figure, and the plot leaves it out).
func (fc FigureComparison) EqualInEveryRun() bool {
	return fc.Pairs > 0 && float64(fc.DiffLo) == 0 && float64(fc.DiffHi) == 0 && float64(fc.A) == float64(fc.B)
}

// QuantisedRecovery says, in one line, when recovery_ms moved by exactly
// the same amount on every paired seed: recovery then ends on the members'
// heartbeat and poll grid (they learn of a rebalance at a heartbeat and
// rejoin at a poll), so the difference is a step of that grid, not a
// spread, and its zero-width interval says nothing about other phases.
// "" otherwise.
func (c *Comparison) QuantisedRecovery() string {
	for _, fc := range c.Figures {
		if fc.Figure != "recovery_ms" || fc.Pairs < 2 || float64(fc.Diff) == 0 ||
			float64(fc.DiffLo) != float64(fc.DiffHi) || float64(fc.DiffLo) != float64(fc.Diff) {
			continue
		}
		return fmt.Sprintf("recovery_ms moved by the same %s ms on all %d seeds: recovery is quantised (it ends on the members' heartbeat and poll grid, whose phase these seeds do not move), so B − A is a grid step, not a measured spread",
			FormatShort(float64(fc.Diff)), fc.Pairs)
	}
	return ""
}

// earliestFault is the scenario's earliest fault (nil without faults).
func earliestFault(sc *scenario.Scenario) *scenario.Fault {
	var first *scenario.Fault
	for i := range sc.Faults {
		if f := &sc.Faults[i]; first == nil || f.At < first.At {
			first = f
		}
	}
	return first
}

// FigureLabel names a figure in compare's table: under a many-step first
// fault (a rolling restart or upgrade) recovery_ms is the first step's
// settle, settled_after_fault_ms the deploy's (recovery_ms alone would read
// as the whole deploy's).
func (c *Comparison) FigureLabel(name string) string {
	if c.ManyStep {
		switch name {
		case "recovery_ms":
			return "recovery_ms (first restart step)"
		case "settled_after_fault_ms":
			return "settled_after_fault_ms (deploy over)"
		}
	}
	return name
}

// Comparison is the result of simrun compare.
type Comparison struct {
	A, B    CompareSide        `json:"-"`
	Seeds   int                `json:"seeds"`
	Figures []FigureComparison `json:"figures"`
	// ManyStep: A's or B's first fault is a rolling restart (or upgrade):
	// recovery_ms is then its first step only.
	ManyStep bool `json:"first_fault_many_step"`
	// LockStep: A and B differ in a group's protocol or assignors and one
	// of them polls in lock-step (scenario.LockStep).
	LockStep bool                 `json:"lock_step"`
	ConfigA  Config               `json:"effective_config_a"`
	ConfigB  Config               `json:"effective_config_b"`
	Runs     map[string][]float64 `json:"-"`
}

// Compare runs A and B on seeds 1..seeds (each a one-point sweep in
// DIR/a and DIR/b: workers, resume) and compares every figure.
func Compare(ctx context.Context, a, b CompareSide, seeds int, opts TuneOptions) (*Comparison, error) {
	c := &Comparison{A: a, B: b, Seeds: seeds}
	var runs [2][][]float64
	var protos [2][]string
	lock := false
	defer func() { c.LockStep = lock && !slices.Equal(protos[0], protos[1]) }()
	for i, side := range []CompareSide{a, b} {
		data := fmt.Sprintf("name: compare-%c\nseeds: %d\nscenario: base\n", 'a'+i, seeds)
		e, err := parse("compare "+side.Name, []byte(data), &resolvedScenario{source: side.Source, data: side.Data})
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(opts.Out, string(rune('a'+i)))
		if _, err := Sweep(ctx, e, Options{Out: dir, Workers: opts.Workers, Runner: opts.Runner, Log: opts.Log}); err != nil {
			return nil, err
		}
		rs, err := LoadResults(e, dir)
		if err != nil {
			return nil, err
		}
		runs[i] = rs.Runs[0]
		sc, err := e.Scenario(e.Points()[0])
		if err != nil {
			return nil, err
		}
		lock = lock || sc.LockStep()
		for g := range sc.Groups {
			protos[i] = append(protos[i], sc.Groups[g].RebalanceProtocol())
		}
		if first := earliestFault(sc); first != nil && first.Kind == scenario.FaultRollingRestart {
			c.ManyStep = true
		}
		if i == 0 {
			c.ConfigA = EffectiveConfig(sc)
		} else {
			c.ConfigB = EffectiveConfig(sc)
		}
	}
	hours := figureIndex("member_hours")
	for f, name := range FigureNames() {
		fc := FigureComparison{Figure: name}
		kind, _ := KindOf(name, "mean")
		est := func(r [][]float64) Estimate {
			if kind == KindRate {
				base := figureIndex(rateEvents(name))
				return FigureInterval(kind, 0, column(r, base), column(r, hours))
			}
			return FigureInterval(kind, 0, column(r, f), nil)
		}
		fc.a, fc.b = est(runs[0]), est(runs[1])
		fc.A, fc.ALo, fc.AHi = Num(fc.a.Value), Num(fc.a.Lo), Num(fc.a.Hi)
		fc.B, fc.BLo, fc.BHi = Num(fc.b.Value), Num(fc.b.Lo), Num(fc.b.Hi)
		fc.Interval = kind.String()
		d, lo, hi, n := PairedDifference(column(runs[0], f), column(runs[1], f))
		fc.Diff, fc.DiffLo, fc.DiffHi, fc.Pairs = Num(d), Num(lo), Num(hi), n
		fc.Distinguishable = n >= 2 && (lo > 0 || hi < 0)
		c.Figures = append(c.Figures, fc)
	}
	return c, nil
}

// PairedDifference is the mean of b[s] − a[s] over the seeds where both
// have a value, with the two-sided 95 % paired Student-t interval. Same
// seeds make the two runs share their random draws where the
// configurations agree, so the difference is much tighter than two
// separate intervals. With fewer than 2 pairs the interval is NaN; when
// every difference is the same the interval is that one value.
func PairedDifference(a, b []float64) (mean, lo, hi float64, n int) {
	var d []float64
	for s := range a {
		if s < len(b) && !math.IsNaN(a[s]) && !math.IsNaN(b[s]) {
			d = append(d, b[s]-a[s])
		}
	}
	nan := math.NaN()
	n = len(d)
	if n == 0 {
		return nan, nan, nan, 0
	}
	mean = stat.Mean(d, nil)
	if n < 2 {
		return mean, nan, nan, n
	}
	sd := stat.StdDev(d, nil)
	if sd == 0 {
		return mean, mean, mean, n
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	half := t * sd / math.Sqrt(float64(n))
	return mean, mean - half, mean + half, n
}

// compareFigures are drawn side by side (the ones with a value).
var compareFigures = []string{"recovery_ms", "generations", "rebalance_duration_ms_p95", "evictions",
	"false_evictions", "coordinator_dead_marks", "unowned_partition_seconds", "double_owned_partition_seconds"}

// WriteComparePlot draws A and B side by side for the main figures (one
// panel each: two bars with their 95 % intervals, the paired difference
// under the panel) to DIR/compare.png and .svg. It returns the PNG path, or
// "" when no main figure has a value. A figure equal in every run (the
// table hides it) gets no panel unless all.
func WriteComparePlot(c *Comparison, dir string, all bool) (string, error) {
	var panels []report.Panel
	names := compareFigures
	if c.ManyStep {
		// Beside the first step's recovery, when the deploy was over.
		names = append([]string{"recovery_ms", "settled_after_fault_ms"}, compareFigures[1:]...)
	}
	for _, name := range names {
		for _, fc := range c.Figures {
			if fc.Figure != name || !finite(fc.a.Value) && !finite(fc.b.Value) || !all && fc.EqualInEveryRun() {
				continue
			}
			caption := "B − A: " + FormatShort(float64(fc.Diff)) + " [" + FormatShort(float64(fc.DiffLo)) + ", " + FormatShort(float64(fc.DiffHi)) + "]"
			if fc.Distinguishable {
				caption += " *"
			}
			title := axisLabel(fc.Figure)
			if c.ManyStep && fc.Figure == "recovery_ms" {
				title = "recovery, first restart step (ms)"
			}
			if c.ManyStep && fc.Figure == "settled_after_fault_ms" {
				title = "settled, deploy over (ms)"
			}
			panels = append(panels, report.Panel{Title: title, Caption: caption,
				A: fc.a.Value, ALo: fc.a.Lo, AHi: fc.a.Hi, B: fc.b.Value, BLo: fc.b.Lo, BHi: fc.b.Hi})
		}
	}
	if len(panels) == 0 {
		return "", nil
	}
	title := fmt.Sprintf("A = %s\nB = %s\n%d paired seeds: mean with 95%% interval; * = B − A distinguishable from 0", c.A.Name, c.B.Name, c.Seeds)
	fig, err := report.SideBySide(title, "A", "B", panels)
	if err != nil {
		return "", err
	}
	base := filepath.Join(dir, "compare")
	if err := writeFigure(dir, base, fig); err != nil {
		return "", err
	}
	return base + ".png", nil
}
