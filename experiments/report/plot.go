package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure size and resolution: legible at README width (16 × 10 cm, fonts
// one or two points above gonum/plot's defaults, PNG at 150 dpi).
const (
	Width  = 16 * vg.Centimeter
	Height = 10 * vg.Centimeter
	DPI    = 150
)

// Style holds the texts and scales of one plot.
type Style struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
}

// Figure is something that draws itself on a canvas.
type Figure interface {
	Draw(dc draw.Canvas)
}

// Sized is a figure with its own size (a timeline grows with its tracks).
type Sized interface {
	Size() (w, h vg.Length)
}

// Render returns the figure as PNG or SVG bytes ("png" or "svg"), at the
// house size unless the figure says otherwise (Sized).
func Render(f Figure, format string) ([]byte, error) {
	w, h := Width, Height
	if s, ok := f.(Sized); ok {
		w, h = s.Size()
	}
	var buf bytes.Buffer
	switch format {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
		f.Draw(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("png: %w", err)
		}
	case "svg":
		c := vgsvg.New(w, h)
		f.Draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("svg: %w", err)
		}
	default:
		return nil, fmt.Errorf("report: unknown image format %q", format)
	}
	return buf.Bytes(), nil
}

// newPlot makes a plot with the house style.
func newPlot(st Style) *plot.Plot {
	p := plot.New()
	p.Title.Text = st.Title
	p.Title.TextStyle.Font.Size = 14
	p.Title.Padding = 4
	p.X.Label.Text = st.XLabel
	p.Y.Label.Text = st.YLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 12
		a.Tick.Label.Font.Size = 11
	}
	p.Legend.TextStyle.Font.Size = 11
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.Padding = 2
	p.Add(plotter.NewGrid())
	if st.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if st.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	return p
}

type plotFigure struct{ p *plot.Plot }

// Draw draws the title across the whole figure, and the legend, if any, in
// a column to the right of the data area, so the legend never covers a
// curve, a band or a bar.
func (f plotFigure) Draw(dc draw.Canvas) {
	const gap = 6 // points between the plot and the legend, and at the edges
	top, restore := drawTitle(dc, f.p)
	defer restore()
	leg := f.p.Legend
	r := leg.Rectangle(dc)
	w := r.Max.X - r.Min.X
	if w <= 0 {
		f.p.Draw(draw.Crop(dc, 0, 0, 0, -top))
		return
	}
	w += vg.Points(2 * gap)
	f.p.Legend = plot.NewLegend() // nothing drawn inside the data area
	f.p.Draw(draw.Crop(dc, 0, -w, 0, -top))
	f.p.Legend = leg
	leg.Left, leg.Top = true, true
	leg.Draw(draw.Crop(dc, dc.Size().X-w+vg.Points(gap), -vg.Points(gap), 0, -top-vg.Points(gap)))
}

// drawTitle draws p's title centred across the whole canvas and returns
// the height it takes, and a function that gives p its title back: until
// then p has no title to draw, so the caller crops the canvas by that
// height and draws the plot below it.
func drawTitle(dc draw.Canvas, p *plot.Plot) (vg.Length, func()) {
	title := p.Title.Text
	if title == "" {
		return 0, func() {}
	}
	sty := p.Title.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - p.Title.Padding}, title)
	p.Title.Text = ""
	return sty.Height(title) + 2*p.Title.Padding, func() { p.Title.Text = title }
}

// Categories labels the integer positions 0..n-1 of a categorical axis.
type Categories []string

// Ticks implements plot.Ticker.
func (c Categories) Ticks(min, max float64) []plot.Tick {
	var t []plot.Tick
	for i, l := range c {
		if float64(i) >= min-1e-9 && float64(i) <= max+1e-9 {
			t = append(t, plot.Tick{Value: float64(i), Label: l})
		}
	}
	return t
}

// LineSeries is one curve: points (X[i], Y[i]) and, when Lo and Hi are
// set, a shaded band from Lo[i] to Hi[i] (the 95% interval). NaN points
// are skipped.
type LineSeries struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	Dashed bool
}

// Line draws curves with interval bands. xCats, when non-nil, labels
// integer x positions (a categorical x axis).
func Line(st Style, series []LineSeries, xCats Categories) (Figure, error) {
	p := newPlot(st)
	if xCats != nil {
		p.X.Tick.Marker = xCats
		p.X.Min, p.X.Max = -0.3, float64(len(xCats))-0.7
	}
	for i, s := range series {
		col := plotutil.Color(i)
		if s.Lo != nil && s.Hi != nil {
			var band plotter.XYs
			for j := range s.X {
				if ok(s.X[j], st.LogX) && ok(s.Lo[j], st.LogY) {
					band = append(band, plotter.XY{X: s.X[j], Y: s.Lo[j]})
				}
			}
			for j := len(s.X) - 1; j >= 0; j-- {
				if ok(s.X[j], st.LogX) && ok(s.Hi[j], st.LogY) {
					band = append(band, plotter.XY{X: s.X[j], Y: s.Hi[j]})
				}
			}
			if len(band) >= 4 {
				poly, err := plotter.NewPolygon(band)
				if err != nil {
					return nil, err
				}
				r, g, b, _ := col.RGBA()
				poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
				poly.LineStyle.Width = 0
				p.Add(poly)
				if i == 0 {
					p.Legend.Add("95% CI of the mean", poly)
				}
			}
		}
		var xy plotter.XYs
		for j := range s.X {
			if ok(s.X[j], st.LogX) && ok(s.Y[j], st.LogY) {
				xy = append(xy, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		l.Color = col
		l.Width = vg.Points(1.8)
		if s.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		pts.Color = col
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(2.8)
		p.Add(l, pts)
		name := s.Name
		if name == "" {
			name = "mean over seeds"
		}
		p.Legend.Add(name, l, pts)
	}
	return plotFigure{p}, nil
}

func ok(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// Sample is a named set of observations (one per seed).
type Sample struct {
	Name   string
	Values []float64
}

// CDF draws the empirical CDF of each sample as a step curve.
func CDF(st Style, samples []Sample) (Figure, error) {
	if st.YLabel == "" {
		st.YLabel = "fraction of runs"
	}
	p := newPlot(st)
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Legend.Top = false
	for i, s := range samples {
		var v []float64
		for _, x := range s.Values {
			if ok(x, st.LogX) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			continue
		}
		sortFloats(v)
		var xy plotter.XYs
		for j, x := range v {
			y0 := float64(j) / float64(len(v))
			y1 := float64(j+1) / float64(len(v))
			xy = append(xy, plotter.XY{X: x, Y: y0}, plotter.XY{X: x, Y: y1})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.8)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	return plotFigure{p}, nil
}

// Box draws one box plot per sample (median, quartiles, whiskers at 1.5
// IQR, outliers as points).
func Box(st Style, samples []Sample) (Figure, error) {
	p := newPlot(st)
	var names []string
	for i, s := range samples {
		names = append(names, s.Name)
		var v plotter.Values
		for _, x := range s.Values {
			if ok(x, false) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(22), float64(i), v)
		if err != nil {
			return nil, err
		}
		b.FillColor = lighten(plotutil.Color(0))
		p.Add(b)
	}
	p.X.Tick.Marker = Categories(names)
	p.X.Min, p.X.Max = -0.6, float64(len(samples))-0.4
	return plotFigure{p}, nil
}

// BarSeries is one set of bars, one per category, with optional 95%
// interval whiskers.
type BarSeries struct {
	Name   string
	Y      []float64
	Lo, Hi []float64
}

// Bar draws grouped bars: one group per category, one bar per series.
func Bar(st Style, cats Categories, series []BarSeries) (Figure, error) {
	p := newPlot(st)
	w := vg.Points(40 / float64(max(1, len(series))))
	if len(cats) > 6 {
		w = vg.Points(20 / float64(max(1, len(series))))
	}
	for i, s := range series {
		vals := make(plotter.Values, len(s.Y))
		for j, y := range s.Y {
			if ok(y, false) {
				vals[j] = y
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * w
		p.Add(b)
		if len(series) > 1 || s.Name != "" {
			p.Legend.Add(s.Name, b)
		}
		if s.Lo != nil && s.Hi != nil {
			var e errPoints
			for j := range s.Y {
				if ok(s.Lo[j], false) && ok(s.Hi[j], false) && ok(s.Y[j], false) {
					e.XYs = append(e.XYs, plotter.XY{X: float64(j), Y: s.Y[j]})
					e.YErrors = append(e.YErrors, struct{ Low, High float64 }{s.Y[j] - s.Lo[j], s.Hi[j] - s.Y[j]})
				}
			}
			if len(e.XYs) > 0 {
				eb, err := plotter.NewYErrorBars(e)
				if err != nil {
					return nil, err
				}
				eb.LineStyle.Width = vg.Points(1.2)
				eb.CapWidth = vg.Points(5)
				// Shift the whiskers onto their bar.
				p.Add(shifted{eb, b.Offset})
			}
		}
	}
	if len(series) > 0 && series[0].Lo != nil {
		p.Legend.Add("whiskers: 95% CI")
	}
	// Headroom above the tallest bar or whisker, so neither touches the frame.
	top := 0.0
	for _, s := range series {
		for j, y := range s.Y {
			if ok(y, false) {
				top = math.Max(top, y)
			}
			if s.Hi != nil && ok(s.Hi[j], false) {
				top = math.Max(top, s.Hi[j])
			}
		}
	}
	if top > 0 {
		p.Y.Min, p.Y.Max = 0, top*1.08
	}
	p.X.Tick.Marker = cats
	p.X.Min, p.X.Max = -0.6, float64(len(cats))-0.4
	return plotFigure{p}, nil
}

type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// shifted draws a plotter moved horizontally by dx (to sit on an offset bar).
type shifted struct {
	pl interface {
		Plot(draw.Canvas, *plot.Plot)
	}
	dx vg.Length
}

func (s shifted) Plot(c draw.Canvas, p *plot.Plot) {
	c.Rectangle.Min.X += s.dx
	c.Rectangle.Max.X += s.dx
	s.pl.Plot(c, p)
}

func lighten(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)/2 + 127) }
	return color.NRGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
}

// Heat is a grid of values: Z[r][c] at column c (XCats[c]) and row r
// (YCats[r]); NaN cells are left blank.
type Heat struct {
	XCats, YCats Categories
	Z            [][]float64
	ZLabel       string
}

type heatGrid struct{ h *Heat }

func (g heatGrid) Dims() (int, int)   { return len(g.h.XCats), len(g.h.YCats) }
func (g heatGrid) Z(c, r int) float64 { return g.h.Z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// Heatmap draws a heat map with each cell's value written in it and a
// colour bar (the legend) on the right.
func Heatmap(st Style, h Heat) (Figure, error) {
	if len(h.XCats) == 0 || len(h.YCats) == 0 {
		return nil, fmt.Errorf("report: empty heat map")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range h.Z {
		for _, z := range row {
			if ok(z, false) {
				lo, hi = math.Min(lo, z), math.Max(hi, z)
			}
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + 1
	}
	cm := moreland.SmoothBlueRed()
	cm.SetMin(lo)
	cm.SetMax(hi)
	p := newPlot(st)
	p.Add(plotter.NewHeatMap(heatGrid{&h}, cm.Palette(64)))
	var lbl plotter.XYLabels
	for r := range h.YCats {
		for c := range h.XCats {
			z := h.Z[r][c]
			if !ok(z, false) {
				continue
			}
			lbl.XYs = append(lbl.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			lbl.Labels = append(lbl.Labels, compact(z))
		}
	}
	if len(lbl.XYs) > 0 && len(h.XCats)*len(h.YCats) <= 64 {
		labels, err := plotter.NewLabels(lbl)
		if err != nil {
			return nil, err
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font.Size = 9
			labels.TextStyle[i].XAlign = draw.XCenter
			labels.TextStyle[i].YAlign = draw.YCenter
		}
		p.Add(labels)
	}
	p.X.Tick.Marker = h.XCats
	p.Y.Tick.Marker = h.YCats
	p.X.Min, p.X.Max = -0.5, float64(len(h.XCats))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(h.YCats))-0.5
	p.Legend = plot.NewLegend() // no legend entries: the colour bar is the legend

	bar := plot.New()
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.HideX()
	bar.Y.Label.Text = h.ZLabel
	bar.Y.Label.TextStyle.Font.Size = 11
	bar.Y.Tick.Label.Font.Size = 10
	return heatFigure{p, bar}, nil
}

type heatFigure struct{ main, bar *plot.Plot }

func (f heatFigure) Draw(dc draw.Canvas) {
	barW := vg.Points(66)
	top, restore := drawTitle(dc, f.main)
	defer restore()
	dc = draw.Crop(dc, 0, 0, 0, -top)
	f.main.Draw(draw.Crop(dc, 0, -barW, 0, 0))
	f.bar.Draw(draw.Crop(dc, dc.Size().X-barW+vg.Points(4), 0, vg.Points(30), 0))
}

// compact formats a number for a heat map cell: at most 3 significant
// digits, no exponent for ordinary magnitudes.
func compact(z float64) string {
	z, _ = strconv.ParseFloat(strconv.FormatFloat(z, 'g', 3, 64), 64) // 9.9997 is written 10.0, not 10.00
	a := math.Abs(z)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(z, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(z, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(z, 'f', 1, 64)
	case a >= 0.01:
		return strconv.FormatFloat(z, 'f', 2, 64)
	default:
		return strconv.FormatFloat(z, 'g', 2, 64)
	}
}

func sortFloats(v []float64) { slices.Sort(v) }
