package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ThresholdSeries is one curve of a requirement plot: estimates Y at X
// with their interval [Lo, Hi] (±Inf: unbounded, drawn to the plot's
// edge), and Bad: x values whose runs are invalid or have no value.
type ThresholdSeries struct {
	Name      string
	X, Y      []float64
	Lo, Hi    []float64
	Bad       []float64
	BandLabel string // legend text of the interval whiskers, e.g. "95% interval (Garwood)"
}

// Threshold draws a figure against a parameter, with interval whiskers,
// a requirement's threshold as a dashed red line, and optionally the
// chosen value as a green vertical line (simrun tune).
func Threshold(st Style, series []ThresholdSeries, bound float64, boundLabel string, mark float64, markLabel string) (Figure, error) {
	p := newPlot(st)
	ymin, ymax := math.Min(bound, 0), bound
	if math.IsNaN(bound) { // a cost shown beside the requirements: no bound
		ymin, ymax = 0, math.Inf(-1)
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for i := range s.X {
			xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			for _, v := range []float64{s.Y[i], s.Lo[i], s.Hi[i]} {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
				}
			}
		}
		for _, x := range s.Bad {
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		}
	}
	if ymax <= ymin {
		ymax = ymin + 1
	}
	top := ymax + 0.08*(ymax-ymin)
	clip := func(v float64) float64 {
		switch {
		case math.IsInf(v, 1):
			return top
		case math.IsInf(v, -1):
			return ymin
		}
		return v
	}
	for i, s := range series {
		col := plotutil.Color(i)
		var pts plotter.XYs
		var errs plotter.YErrors
		for j := range s.X {
			if math.IsNaN(s.Y[j]) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			lo, hi := clip(s.Lo[j]), clip(s.Hi[j])
			if math.IsNaN(lo) || math.IsNaN(hi) {
				lo, hi = s.Y[j], s.Y[j]
			}
			errs = append(errs, struct{ Low, High float64 }{s.Y[j] - lo, hi - s.Y[j]})
		}
		if len(pts) > 0 {
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			l.Color, sc.Color = col, col
			l.Width = vg.Points(1.5)
			sc.Shape = plotutil.Shape(i)
			sc.Radius = vg.Points(2.8)
			p.Add(l, sc)
			name := s.Name
			if name == "" {
				name = "estimate"
			}
			p.Legend.Add(name, l, sc)
			eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
			p.Add(eb)
			if i == 0 && s.BandLabel != "" {
				p.Legend.Add(s.BandLabel, &plotter.Line{LineStyle: eb.LineStyle})
			}
		}
		if len(s.Bad) > 0 {
			var bad plotter.XYs
			for _, x := range s.Bad {
				bad = append(bad, plotter.XY{X: x, Y: ymin})
			}
			sc, err := plotter.NewScatter(bad)
			if err != nil {
				return nil, err
			}
			sc.Shape = draw.CrossGlyph{}
			sc.Color = color.RGBA{R: 200, A: 255}
			sc.Radius = vg.Points(4)
			p.Add(sc)
			if i == 0 {
				p.Legend.Add("invalid / no value (fails)", sc)
			}
		}
	}
	if xmin > xmax {
		xmin, xmax = 0, 1
	}
	if !math.IsNaN(bound) {
		th, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: bound}, {X: xmax, Y: bound}})
		if err != nil {
			return nil, err
		}
		th.Color = color.RGBA{R: 200, G: 30, B: 30, A: 255}
		th.Width = vg.Points(1.5)
		th.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(th)
		p.Legend.Add(boundLabel, th)
	}
	if !math.IsNaN(mark) {
		ml, err := plotter.NewLine(plotter.XYs{{X: mark, Y: ymin}, {X: mark, Y: top}})
		if err != nil {
			return nil, err
		}
		ml.Color = color.RGBA{G: 140, A: 255}
		ml.Width = vg.Points(1.5)
		p.Add(ml)
		p.Legend.Add(markLabel, ml)
	}
	p.Y.Min, p.Y.Max = ymin, top
	return plotFigure{p}, nil
}

// Panel is one figure of a side-by-side comparison: A and B with their
// intervals (NaN: none) and a caption under the axis (the difference).
type Panel struct {
	Title, Caption string
	A, ALo, AHi    float64
	B, BLo, BHi    float64
}

// SideBySide draws one small panel per figure, A and B as two bars with
// their interval whiskers (simrun compare).
func SideBySide(title, nameA, nameB string, panels []Panel) (Figure, error) {
	cols := min(4, len(panels))
	rows := (len(panels) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	colA, colB := plotutil.Color(0), plotutil.Color(1)
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.Title
		p.Title.TextStyle.Font.Size = vg.Points(10)
		p.X.Label.Text = pn.Caption
		p.X.Label.TextStyle.Font.Size = vg.Points(9)
		p.Y.Tick.Label.Font.Size = vg.Points(9)
		p.X.Tick.Label.Font.Size = vg.Points(9)
		p.Y.Tick.Marker = cleanTicks{}
		val := func(v float64) float64 {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0
			}
			return v
		}
		for j, c := range []color.Color{colA, colB} {
			vals := plotter.Values{0, 0}
			vals[j] = val([]float64{pn.A, pn.B}[j])
			b, err := plotter.NewBarChart(vals, vg.Points(24))
			if err != nil {
				return nil, err
			}
			b.Color = c
			b.LineStyle.Width = 0
			p.Add(b)
		}
		var pts plotter.XYs
		var errs plotter.YErrors
		for j, e := range [][3]float64{{pn.A, pn.ALo, pn.AHi}, {pn.B, pn.BLo, pn.BHi}} {
			if ok(e[0], false) && ok(e[1], false) && ok(e[2], false) {
				pts = append(pts, plotter.XY{X: float64(j), Y: e[0]})
				errs = append(errs, struct{ Low, High float64 }{e[0] - e[1], e[2] - e[0]})
			}
		}
		if len(pts) > 0 {
			p.Add(&plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1)}, CapWidth: vg.Points(5)})
		}
		p.NominalX(nameA, nameB)
		p.Y.Min = math.Min(0, p.Y.Min)
		if p.Y.Max <= p.Y.Min {
			p.Y.Max = p.Y.Min + 1
		}
		plots[i/cols][i%cols] = p
	}
	return sideBySide{title: title, plots: plots}, nil
}

type sideBySide struct {
	title string
	plots [][]*plot.Plot
}

func (s sideBySide) Size() (vg.Length, vg.Length) {
	return 28 * vg.Centimeter, vg.Length(len(s.plots))*8*vg.Centimeter + s.titleBand()
}

// titleStyle is the style of the title, one or more lines centred.
func (s sideBySide) titleStyle() draw.TextStyle {
	st := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	st.Font.Size = vg.Points(11)
	return st
}

// titleBand is the height the title takes, with its margins.
func (s sideBySide) titleBand() vg.Length {
	return s.titleStyle().Height(s.title) + vg.Points(10)
}

func (s sideBySide) Draw(dc draw.Canvas) {
	dc.FillText(s.titleStyle(), vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(4)}, s.title)
	body := draw.Crop(dc, 0, 0, 0, -s.titleBand())
	t := draw.Tiles{Rows: len(s.plots), Cols: len(s.plots[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 8}
	canvases := plot.Align(s.plots, t, body)
	for r := range s.plots {
		for c := range s.plots[r] {
			if s.plots[r][c] != nil {
				s.plots[r][c].Draw(canvases[r][c])
			}
		}
	}
}

// Stack draws figures made by Threshold (or Line) one above the other on
// a shared x axis, under one title: a requirement and a cost against the
// parameter, the recommendation marked on each (simrun tune's trade-off
// figure). Each panel keeps its own title, y axis and legend, so two
// figures never share a y axis whose unit they do not share.
func Stack(title string, figs []Figure) (Figure, error) {
	var ps []*plot.Plot
	for _, f := range figs {
		pf, ok := f.(plotFigure)
		if !ok {
			return nil, fmt.Errorf("report: Stack takes line figures")
		}
		ps = append(ps, pf.p)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("report: nothing to stack")
	}
	// One x range for all.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo, hi = math.Min(lo, p.X.Min), math.Max(hi, p.X.Max)
	}
	for _, p := range ps {
		p.X.Min, p.X.Max = lo, hi
	}
	return stacked{title: title, plots: ps}, nil
}

type stacked struct {
	title string
	plots []*plot.Plot
}

func (s stacked) Size() (vg.Length, vg.Length) {
	return Width, vg.Length(len(s.plots))*Height*0.62 + s.titleBand()
}

func (s stacked) titleStyle() draw.TextStyle {
	st := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	st.Font.Size = vg.Points(13)
	return st
}

func (s stacked) titleBand() vg.Length { return s.titleStyle().Height(s.title) + vg.Points(10) }

func (s stacked) Draw(dc draw.Canvas) {
	dc.FillText(s.titleStyle(), vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(4)}, s.title)
	body := draw.Crop(dc, 0, 0, 0, -s.titleBand())
	h := (body.Max.Y - body.Min.Y) / vg.Length(len(s.plots))
	// The legend of every panel in one column at the right, as plotFigure
	// draws it; the data areas line up because every panel gets the same
	// legend width.
	var legW vg.Length
	for _, p := range s.plots {
		legW = max(legW, plotFigure{p}.legendNatural(body))
	}
	// plot.Align lines the data areas up, whatever the y tick widths.
	grid := make([][]*plot.Plot, len(s.plots))
	legs := make([]*plot.Legend, len(s.plots))
	for i, p := range s.plots {
		grid[i] = []*plot.Plot{p}
		leg := p.Legend
		legs[i] = &leg
		p.Legend = plot.NewLegend()
	}
	t := draw.Tiles{Rows: len(s.plots), Cols: 1, PadY: vg.Millimeter * 4, PadLeft: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	canvases := plot.Align(grid, t, draw.Crop(body, 0, -legW, 0, 0))
	for i, p := range s.plots {
		p.Draw(canvases[i][0])
		p.Legend = *legs[i]
		top := body.Max.Y - vg.Length(i)*h
		c := draw.Crop(body, 0, 0, top-h-body.Min.Y, top-body.Max.Y)
		leg := p.Legend
		leg.Left, leg.Top = true, true
		leg.Draw(draw.Crop(c, c.Size().X-legW+vg.Points(6), -vg.Points(6), 0, -vg.Points(20)))
	}
}
