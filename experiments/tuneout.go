package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
)

// Num is a JSON number that writes NaN (no value) as null and an
// unbounded interval side as the string "inf" or "-inf", where
// encoding/json would fail.
type Num float64

func (n Num) MarshalJSON() ([]byte, error) {
	x := float64(n)
	switch {
	case math.IsNaN(x):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-inf"`), nil
	}
	return []byte(strconv.FormatFloat(x, 'g', -1, 64)), nil
}

// plotFig draws a gonum plot at the house size (report.Render).
type plotFig struct{ p *plot.Plot }

func (f plotFig) Draw(dc draw.Canvas) { f.p.Draw(dc) }

// WriteTuneFiles writes DIR/tune.csv (one row per value tried and
// requirement, encoding/csv) and one plot per requirement (PNG and SVG):
// the figure's estimate with its 95 % interval against the parameter, the
// requirement's threshold drawn, the recommended value marked. It returns
// the PNG paths.
func WriteTuneFiles(r *TuneResult, dir string) ([]string, error) {
	if err := atomicfile.WriteFile(filepath.Join(dir, "tune.csv"), r.csv()); err != nil {
		return nil, err
	}
	var pngs []string
	for q, req := range r.Spec.Requirements {
		fig, err := r.plot(q)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", req.Text, err)
		}
		base := filepath.Join(dir, fmt.Sprintf("require-%d-%s", q+1, req.Figure))
		for _, format := range []string{"png", "svg"} {
			b, err := report.Render(fig, format)
			if err != nil {
				return nil, err
			}
			if err := atomicfile.WriteFile(base+"."+format, b); err != nil {
				return nil, err
			}
		}
		pngs = append(pngs, base+".png")
	}
	return pngs, nil
}

func (r *TuneResult) csv() []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	h := []string{}
	for _, p := range r.Spec.Params {
		h = append(h, p.Column)
	}
	h = append(h, "requirement", "figure", "stat", "estimate", "ci95_lo", "ci95_hi", "interval", "runs", "runs_without_value", "pass", "value_pass", "invalid")
	w.Write(h)
	for _, t := range r.Trials {
		for q, c := range t.Checks {
			row := []string{}
			for i := range r.Spec.Params {
				row = append(row, strconv.FormatFloat(t.Values[i], 'f', -1, 64))
			}
			req := r.Spec.Requirements[q]
			row = append(row, req.Text, req.Figure, req.Stat, FormatNumber(c.Est.Value), FormatNumber(c.Est.Lo), FormatNumber(c.Est.Hi),
				c.Interval, strconv.Itoa(c.Runs), strconv.Itoa(c.Missing), strconv.FormatBool(c.Pass), strconv.FormatBool(t.Pass), t.Invalid)
			w.Write(row)
		}
	}
	w.Flush()
	return buf.Bytes()
}

// plot draws requirement q against the first parameter (one curve per
// combination of the other parameters).
func (r *TuneResult) plot(q int) (report.Figure, error) {
	req := r.Spec.Requirements[q]
	p0 := r.Spec.Params[0]
	p := plot.New()
	stat := "mean over seeds"
	if req.Stat != "mean" {
		stat = req.Stat + " over seeds"
	}
	if k, _ := KindOf(req.Figure, req.Stat); k == KindRate {
		stat = "pooled over seeds"
	}
	p.Title.Text = fmt.Sprintf("%s vs %s, %d seeds per value", strings.ReplaceAll(req.Figure, "_", " "), strings.ReplaceAll(strings.TrimSuffix(p0.Column, "_ms"), "_", " "), r.Spec.Seeds)
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Label.Text = axisLabel(p0.Column)
	p.Y.Label.Text = axisLabel(req.Figure) + ", " + stat
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())

	// Interval bounds beyond the drawn range (an unbounded p95) are
	// clipped to the top of the plot.
	ymax, ymin := req.Bound, math.Min(req.Bound, 0)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, t := range r.Trials {
		c := t.Checks[q]
		xmin, xmax = math.Min(xmin, t.Values[0]), math.Max(xmax, t.Values[0])
		for _, v := range []float64{c.Est.Value, c.Est.Lo, c.Est.Hi} {
			if finite(v) {
				ymax, ymin = math.Max(ymax, v), math.Min(ymin, v)
			}
		}
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	top := ymax + 0.08*(ymax-ymin)
	clip := func(v float64) float64 {
		if math.IsInf(v, 1) {
			return top
		}
		if math.IsInf(v, -1) {
			return ymin
		}
		return v
	}
	groups := map[string][]Trial{}
	var names []string
	for _, t := range r.Trials {
		key := ""
		if len(t.Values) > 1 {
			key = r.Spec.label(append([]float64{math.NaN()}, t.Values[1:]...))
			key = key[len(p0.Column)+5:] // drop "col=NaN "
		}
		if _, ok := groups[key]; !ok {
			names = append(names, key)
		}
		groups[key] = append(groups[key], t)
	}
	for gi, name := range names {
		var pts plotter.XYs
		var errs plotter.YErrors
		var bad plotter.XYs
		for _, t := range groups[name] {
			c := t.Checks[q]
			if t.Invalid != "" || math.IsNaN(c.Est.Value) {
				bad = append(bad, plotter.XY{X: t.Values[0], Y: ymin})
				continue
			}
			pts = append(pts, plotter.XY{X: t.Values[0], Y: c.Est.Value})
			errs = append(errs, struct{ Low, High float64 }{c.Est.Value - clip(c.Est.Lo), clip(c.Est.Hi) - c.Est.Value})
		}
		col := plotColor(gi)
		label := "estimate"
		if name != "" {
			label = name
		}
		if len(pts) > 0 {
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			l.Color, s.Color = col, col
			s.Shape = draw.CircleGlyph{}
			s.Radius = vg.Points(2.5)
			p.Add(l, s)
			p.Legend.Add(label, l, s)
			eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
			p.Add(eb)
			if gi == 0 {
				p.Legend.Add("95% interval ("+KindOfName(req)+")", &plotter.Line{LineStyle: eb.LineStyle})
			}
		}
		if len(bad) > 0 {
			s, err := plotter.NewScatter(bad)
			if err != nil {
				return nil, err
			}
			s.Shape = draw.CrossGlyph{}
			s.Color = color.RGBA{R: 200, A: 255}
			s.Radius = vg.Points(4)
			p.Add(s)
			if gi == 0 {
				p.Legend.Add("invalid or no value (fails)", s)
			}
		}
	}
	// The threshold.
	th, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: req.Bound}, {X: xmax, Y: req.Bound}})
	if err != nil {
		return nil, err
	}
	th.Color = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	th.Width = vg.Points(1.5)
	th.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(th)
	side := "upper"
	if req.Op[0] == '>' {
		side = "lower"
	}
	p.Legend.Add(fmt.Sprintf("requirement %s %s (checked on the %s bound)", req.Op, FormatNumber(req.Bound), side), th)
	if r.Recommended >= 0 {
		x := r.Trials[r.Recommended].Values[0]
		rl, err := plotter.NewLine(plotter.XYs{{X: x, Y: ymin}, {X: x, Y: top}})
		if err != nil {
			return nil, err
		}
		rl.Color = color.RGBA{G: 140, A: 255}
		rl.Width = vg.Points(1.5)
		p.Add(rl)
		p.Legend.Add(fmt.Sprintf("recommended %s=%s", p0.Column, strconv.FormatFloat(x, 'f', -1, 64)), rl)
	}
	p.Y.Min, p.Y.Max = ymin, top+0.25*(top-ymin) // room for the legend
	return plotFig{p}, nil
}

// KindOfName names the interval of a requirement's figure.
func KindOfName(req Requirement) string {
	k, _ := KindOf(req.Figure, req.Stat)
	return k.String()
}

func plotColor(i int) color.Color {
	cs := []color.Color{
		color.RGBA{R: 31, G: 119, B: 180, A: 255},
		color.RGBA{R: 255, G: 127, B: 14, A: 255},
		color.RGBA{R: 44, G: 160, B: 44, A: 255},
		color.RGBA{R: 148, G: 103, B: 189, A: 255},
		color.RGBA{R: 140, G: 86, B: 75, A: 255},
	}
	return cs[i%len(cs)]
}
