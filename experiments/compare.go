package experiments

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rebalsim/rebalsim/internal/atomicfile"
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

// Comparison is the result of simrun compare.
type Comparison struct {
	A, B    CompareSide          `json:"-"`
	Seeds   int                  `json:"seeds"`
	Figures []FigureComparison   `json:"figures"`
	ConfigA Config               `json:"effective_config_a"`
	ConfigB Config               `json:"effective_config_b"`
	Runs    map[string][]float64 `json:"-"`
}

// Compare runs A and B on seeds 1..seeds (each a one-point sweep in
// DIR/a and DIR/b: workers, resume) and compares every figure.
func Compare(ctx context.Context, a, b CompareSide, seeds int, opts TuneOptions) (*Comparison, error) {
	c := &Comparison{A: a, B: b, Seeds: seeds}
	var runs [2][][]float64
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
				base := figureIndex(strings.TrimSuffix(name, "_per_member_hour"))
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
var compareFigures = []string{"recovery_ms", "rebalance_count", "rebalance_duration_ms_p95", "evictions",
	"false_evictions", "coordinator_dead_marks", "unowned_partition_seconds", "double_owned_partition_seconds"}

// WriteComparePlot draws A and B side by side for the main figures (one
// panel each: two bars with their 95 % intervals, the paired difference
// in the panel title) to DIR/compare.png and .svg.
func WriteComparePlot(c *Comparison, dir string) (string, error) {
	var panels []FigureComparison
	for _, name := range compareFigures {
		for _, fc := range c.Figures {
			if fc.Figure == name && (finite(fc.a.Value) || finite(fc.b.Value)) {
				panels = append(panels, fc)
			}
		}
	}
	if len(panels) == 0 {
		return "", nil
	}
	cols := 4
	rows := (len(panels) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	colA, colB := color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255}
	for i, fc := range panels {
		p := plot.New()
		p.Title.Text = axisLabel(fc.Figure)
		p.Title.TextStyle.Font.Size = vg.Points(9)
		verdict := "B−A: " + FormatShort(float64(fc.Diff)) + " [" + FormatShort(float64(fc.DiffLo)) + ", " + FormatShort(float64(fc.DiffHi)) + "]"
		if fc.Distinguishable {
			verdict += " *"
		}
		p.X.Label.Text = verdict
		p.X.Label.TextStyle.Font.Size = vg.Points(7.5)
		p.Y.Tick.Label.Font.Size = vg.Points(7)
		p.X.Tick.Label.Font.Size = vg.Points(8)
		vals := plotter.Values{0, 0}
		for j, e := range []Estimate{fc.a, fc.b} {
			if finite(e.Value) {
				vals[j] = e.Value
			}
		}
		// Two charts, one bar each, so A and B have their own colours.
		bars, err := plotter.NewBarChart(plotter.Values{vals[0], 0}, vg.Points(22))
		if err != nil {
			return "", err
		}
		bars.Color = colA
		bars.LineStyle.Width = 0
		b2, err := plotter.NewBarChart(plotter.Values{0, vals[1]}, vg.Points(22))
		if err != nil {
			return "", err
		}
		b2.Color = colB
		b2.LineStyle.Width = 0
		p.Add(bars, b2)
		var pts plotter.XYs
		var errs plotter.YErrors
		for j, e := range []Estimate{fc.a, fc.b} {
			if finite(e.Lo) && finite(e.Hi) {
				pts = append(pts, plotter.XY{X: float64(j), Y: e.Value})
				errs = append(errs, struct{ Low, High float64 }{e.Value - e.Lo, e.Hi - e.Value})
			}
		}
		if len(pts) > 0 {
			eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
			p.Add(eb)
		}
		p.NominalX(c.A.Name, c.B.Name)
		p.Y.Min = 0
		plots[i/cols][i%cols] = p
	}
	w, h := 28*vg.Centimeter, vg.Length(rows)*8*vg.Centimeter+vg.Centimeter
	draw1 := func(dc draw.Canvas) {
		title := fmt.Sprintf("A = %s vs B = %s, %d paired seeds (bars: mean with 95%% interval; * = difference distinguishable from 0)", c.A.Name, c.B.Name, c.Seeds)
		st := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
		st.Font.Size = vg.Points(10)
		dc.FillText(st, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(4)}, title)
		body := draw.Canvas{Canvas: dc.Canvas, Rectangle: dc.Rectangle}
		body.Max.Y -= vg.Centimeter
		t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases := plot.Align(plots, t, body)
		for r := range plots {
			for cc := range plots[r] {
				if plots[r][cc] != nil {
					plots[r][cc].Draw(canvases[r][cc])
				}
			}
		}
	}
	base := filepath.Join(dir, "compare")
	for _, format := range []string{"png", "svg"} {
		var data []byte
		switch format {
		case "png":
			cv := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150), vgimg.UseBackgroundColor(color.White))
			draw1(draw.New(cv))
			var buf bytes.Buffer
			if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&buf); err != nil {
				return "", err
			}
			data = buf.Bytes()
		case "svg":
			cv := vgsvg.New(w, h)
			draw1(draw.New(cv))
			var buf bytes.Buffer
			if _, err := cv.WriteTo(&buf); err != nil {
				return "", err
			}
			data = buf.Bytes()
		}
		if err := atomicfile.WriteFile(base+"."+format, data); err != nil {
			return "", err
		}
	}
	return base + ".png", nil
}

// ScenarioWith applies overrides to a scenario's bytes (compare --a-set).
func ScenarioWith(source string, data []byte, overrides []scenario.Override) ([]byte, error) {
	return scenario.Overridden(source, data, overrides)
}
