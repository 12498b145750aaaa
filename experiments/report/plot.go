package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
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
	// XTicks, when set, puts the x ticks at these values (the swept values
	// of a discrete axis), labelled where labels do not collide.
	XTicks []float64
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
	p.X.Tick.Marker = cleanTicks{}
	p.Y.Tick.Marker = cleanTicks{}
	if st.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if st.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if len(st.XTicks) > 0 {
		p.X.Tick.Marker = valueTicks{values: st.XTicks, log: st.LogX}
	}
	return p
}

// cleanTicks are gonum's default ticks with labels written as short as the
// value allows ("50000", not "50000.00"; "0.5", not "0.50").
type cleanTicks struct{}

func (cleanTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = TickLabel(ts[i].Value)
		}
	}
	return ts
}

// TickLabel writes a tick value with at most 6 significant digits and no
// trailing zeros.
func TickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if a := math.Abs(r); a >= 1e-4 && a < 1e9 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}

// valueTicks puts a tick at each swept value; a value whose label would
// come too close to the previous labelled one (on the axis's scale) keeps
// an unlabelled tick.
type valueTicks struct {
	values []float64
	log    bool
}

func (v valueTicks) Ticks(min, max float64) []plot.Tick {
	pos := func(x float64) float64 {
		if v.log {
			return math.Log10(x)
		}
		return x
	}
	if v.log && min <= 0 {
		min = v.values[0]
	}
	span := pos(max) - pos(min)
	var out []plot.Tick
	last := math.Inf(-1)
	for _, x := range v.values {
		if x < min-1e-12 || x > max+1e-12 || (v.log && x <= 0) {
			continue
		}
		t := plot.Tick{Value: x}
		if span <= 0 || pos(x)-last >= span/10 {
			t.Label = TickLabel(x)
			last = pos(x)
		}
		out = append(out, t)
	}
	return out
}

type plotFigure struct{ p *plot.Plot }

// Draw draws the title across the whole figure, and the legend, if any, in
// a column to the right of the data area, so the legend never covers a
// curve, a band or a bar.
func (f plotFigure) Draw(dc draw.Canvas) {
	const gap = 6 // points between the plot and the legend, and at the edges
	w := f.legendWidth(dc)
	fitPlot(f.p, dc.Size().X, dc.Size().Y-f.legendBelow(dc), w)
	top, restore := drawTitle(dc, f.p)
	defer restore()
	leg := f.p.Legend
	below := f.legendBelow(dc)
	if w <= 0 && below <= 0 {
		f.p.Draw(draw.Crop(dc, 0, 0, 0, -top))
		return
	}
	f.p.Legend = plot.NewLegend() // nothing drawn inside the data area
	defer func() { f.p.Legend = leg }()
	leg.Left, leg.Top = true, true
	if below > 0 {
		// A legend wider than maxLegendRight of the canvas goes under the
		// data area, across the whole width, so a reader sees where the threshold lies.
		f.p.Draw(draw.Crop(dc, 0, 0, below, -top))
		leg.Draw(draw.Crop(dc, vg.Points(gap), -vg.Points(gap), vg.Points(gap), -(dc.Size().Y - below)))
		return
	}
	f.p.Draw(draw.Crop(dc, 0, -w, 0, -top))
	leg.Draw(draw.Crop(dc, dc.Size().X-w+vg.Points(gap), -vg.Points(gap), 0, -top-vg.Points(gap)))
}

// Size is the house size, taller by the band of a legend drawn below the
// data, so the data area keeps its height.
func (f plotFigure) Size() (vg.Length, vg.Length) {
	return Width, Height + f.legendBelow(draw.New(vgimg.New(Width, Height)))
}

// maxLegendRight is the widest legend column, as a fraction of the
// canvas width, kept to the right of the data area; a wider legend goes
// below it.
const maxLegendRight = 0.25

// legendWidth is the width of the legend column to the right of the data
// area (0 without a legend, or when the legend goes below it).
func (f plotFigure) legendWidth(dc draw.Canvas) vg.Length {
	w := f.legendNatural(dc)
	if float64(w) > maxLegendRight*float64(dc.Size().X) {
		return 0
	}
	return w
}

// legendNatural is the width the legend takes with its margins.
func (f plotFigure) legendNatural(dc draw.Canvas) vg.Length {
	const gap = 6
	r := f.p.Legend.Rectangle(dc)
	w := r.Max.X - r.Min.X
	if w <= 0 {
		return 0
	}
	return w + vg.Points(2*gap)
}

// legendBelow is the height of the band under the data area that holds a
// legend too wide for a column at the right (0: none there).
func (f plotFigure) legendBelow(dc draw.Canvas) vg.Length {
	const gap = 6
	w := f.legendNatural(dc)
	if w <= 0 || float64(w) <= maxLegendRight*float64(dc.Size().X) {
		return 0
	}
	r := f.p.Legend.Rectangle(dc)
	return r.Max.Y - r.Min.Y + vg.Points(2*gap)
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
	// NoPoints draws the curve without a glyph at each point (a step
	// series of many points, e.g. a timeline).
	NoPoints bool
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
				poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 45}
				poly.LineStyle.Width = 0
				p.Add(poly)
				if i == 0 {
					p.Legend.Add("95% interval", poly)
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
		name := s.Name
		if name == "" {
			name = "mean over seeds"
		}
		if s.NoPoints {
			p.Add(l)
			p.Legend.Add(name, l)
			continue
		}
		p.Add(l, pts)
		p.Legend.Add(name, l, pts)
	}
	if st.LogY {
		var vals []float64
		for _, s := range series {
			vals = append(append(append(vals, s.Y...), s.Lo...), s.Hi...)
		}
		logAxis(&p.Y, vals)
	}
	return plotFigure{p}, nil
}

// logAxis keeps a log axis drawable: its range covers only the values
// above 0 (a zero whisker or band edge is skipped, not drawn: a log axis has no 0);
// with none at all the axis falls back to a linear one from 0, rather than
// failing after the sweep.
func logAxis(a *plot.Axis, vals []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if ok(v, true) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		a.Scale = plot.LinearScale{}
		a.Tick.Marker = cleanTicks{}
		a.Min, a.Max = 0, 1
		return
	}
	if a.Min <= 0 || a.Min > lo {
		a.Min = lo
	}
	if a.Max < hi {
		a.Max = hi
	}
	if a.Max <= a.Min {
		a.Max = a.Min * 10
	}
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

// BoxSeries is one set of boxes, one per category: Values[c] are the runs
// of category c.
type BoxSeries struct {
	Name   string
	Values [][]float64
	// ColourMedian draws the median in the series' colour, thick: a box of
	// equal values (a single run) is then still told apart by colour.
	ColourMedian bool
}

// Box draws box plots (median, quartiles, whiskers at 1.5 IQR, outliers as
// points): one group per category, one box per series side by side, the
// series told apart by colour in the legend.
func Box(st Style, cats Categories, series []BoxSeries) (Figure, error) {
	p := newPlot(st)
	n := max(1, len(series))
	w := vg.Points(min(22, 60/float64(n)))
	for si, s := range series {
		for c, vals := range s.Values {
			var v plotter.Values
			for _, x := range vals {
				if ok(x, st.LogY) {
					v = append(v, x)
				}
			}
			if len(v) == 0 {
				continue
			}
			b, err := plotter.NewBoxPlot(w, float64(c), v)
			if err != nil {
				return nil, err
			}
			b.Offset = vg.Length(float64(si)-float64(n-1)/2) * (w + vg.Points(2))
			b.FillColor = lighten(plotutil.Color(si))
			if s.ColourMedian {
				b.MedianStyle.Color = plotutil.Color(si)
				b.MedianStyle.Width = vg.Points(3)
			}
			p.Add(b)
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, swatch{lighten(plotutil.Color(si))})
		}
	}
	p.X.Tick.Marker = cats
	p.X.Min, p.X.Max = -0.6, float64(len(cats))-0.4
	return plotFigure{p}, nil
}

// swatch is a legend thumbnail: a filled square of one colour.
type swatch struct{ c color.Color }

func (w swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(w.c, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
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
		p.Legend.Add("whiskers: 95% interval")
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
	// A non-negative quantity (a rate, a count, a fraction) has no
	// midpoint to diverge from: a sequential palette, light for low values
	// and dark for high ones. A diverging palette only when values straddle 0.
	var cm palette.ColorMap
	if lo >= 0 {
		seq := &sequential{stops: []color.NRGBA{ // ColorBrewer OrRd, extended to a dark end
			{R: 0xff, G: 0xf7, B: 0xec, A: 0xff}, {R: 0xfd, G: 0xbb, B: 0x84, A: 0xff},
			{R: 0xef, G: 0x65, B: 0x48, A: 0xff}, {R: 0xb3, G: 0x00, B: 0x00, A: 0xff},
			{R: 0x4d, G: 0x00, B: 0x00, A: 0xff},
		}}
		cm = seq
	} else {
		cm = moreland.SmoothBlueRed()
	}
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
			// White text on dark cells, black on light ones.
			c := int(lbl.XYs[i].X)
			r := int(lbl.XYs[i].Y)
			if col, err := cm.At(h.Z[r][c]); err == nil && luminance(col) < 0.45 {
				labels.TextStyle[i].Color = color.White
			}
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
	return heatFigure{main: p, bar: bar, cm: cm}, nil
}

type heatFigure struct {
	main, bar *plot.Plot
	cm        palette.ColorMap // the palette the cells and the colour bar use
}

// heatBarWidth is the width of a heat map's colour-bar column.
const heatBarWidth = vg.Length(66)

func (f heatFigure) Draw(dc draw.Canvas) {
	barW := heatBarWidth
	fitPlot(f.main, dc.Size().X, dc.Size().Y, barW)
	shrinkToFit(&f.bar.Y.Label.TextStyle, f.bar.Y.Label.Text, dc.Size().Y-axisRoom)
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

// luminance is the relative luminance of c in [0, 1] (Rec. 709 weights).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// sequential is a palette.ColorMap interpolating linearly between colour
// stops from Min (the first, light) to Max (the last, dark).
type sequential struct {
	stops    []color.NRGBA
	min, max float64
	alpha    float64
}

func (s *sequential) At(v float64) (color.Color, error) {
	if math.IsNaN(v) {
		return nil, palette.ErrNaN
	}
	f := 0.0
	if s.max > s.min {
		f = (v - s.min) / (s.max - s.min)
	}
	f = math.Max(0, math.Min(1, f))
	pos := f * float64(len(s.stops)-1)
	i := int(pos)
	if i >= len(s.stops)-1 {
		return s.stops[len(s.stops)-1], nil
	}
	t := pos - float64(i)
	a, b := s.stops[i], s.stops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*t + 0.5) }
	return color.NRGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 0xff}, nil
}

func (s *sequential) Max() float64     { return s.max }
func (s *sequential) Min() float64     { return s.min }
func (s *sequential) SetMax(v float64) { s.max = v }
func (s *sequential) SetMin(v float64) { s.min = v }
func (s *sequential) Alpha() float64   { return 1 }
func (s *sequential) SetAlpha(float64) {}
func (s *sequential) Palette(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		v := s.min
		if n > 1 {
			v += (s.max - s.min) * float64(i) / float64(n-1)
		}
		cs[i], _ = s.At(v)
	}
	return plainPalette(cs)
}

type plainPalette []color.Color

func (p plainPalette) Colors() []color.Color { return p }
