package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Space the axes take beside the data area (tick labels and padding), and
// the smallest font a label is shrunk to before it counts as not fitting.
const (
	axisRoom    = vg.Length(58)
	minFontSize = vg.Length(9) // readable at 100 % zoom in a pasted review document
)

// shrinkToFit makes a text style's font smaller until text is at most
// room wide, not below minFontSize.
func shrinkToFit(sty *draw.TextStyle, text string, room vg.Length) {
	for sty.Font.Size > minFontSize && sty.Width(text) > room {
		sty.Font.Size -= 0.5
	}
}

// fitPlot shrinks the title and axis labels of p so they fit a canvas of
// size w × h whose legend column is legW wide and title band top high.
func fitPlot(p *plot.Plot, w, h, legW vg.Length) {
	shrinkToFit(&p.Title.TextStyle, p.Title.Text, w-8)
	shrinkToFit(&p.X.Label.TextStyle, p.X.Label.Text, w-legW-axisRoom)
	shrinkToFit(&p.Y.Label.TextStyle, p.Y.Label.Text, h-p.Title.TextStyle.Height(p.Title.Text)-axisRoom)
}

// Problems draws the figure on a canvas of its size and lists every text
// that does not fit it: a title, axis label or colour-bar label wider than
// its room (a cut label), a legend wider than maxLegendRight of the
// canvas beside the data or wider than the canvas below it, a text smaller
// than minFontSize, or two x tick labels (category labels) that overlap.
// Tests call it on every built-in plot; a sweep's warnings (and REPORT.md)
// list what it finds.
func Problems(f Figure) []string {
	w, h := Width, Height
	if s, ok := f.(Sized); ok {
		w, h = s.Size()
	}
	c := vgimg.New(w, h)
	dc := draw.New(c)
	f.Draw(dc)
	var out []string
	check := func(what, text string, sty draw.TextStyle, room vg.Length) {
		if text == "" {
			return
		}
		if tw := sty.Width(text); tw > room {
			out = append(out, fmt.Sprintf("%s %q is %.0f pt wide, room for %.0f pt", what, text, float64(tw), float64(room)))
		}
	}
	var ps []*plot.Plot
	var legW, below vg.Length
	switch fig := f.(type) {
	case plotFigure:
		ps = []*plot.Plot{fig.p}
		legW = fig.legendWidth(dc)
		if float64(legW) > maxLegendRight*float64(w) {
			out = append(out, fmt.Sprintf("legend is %.0f pt wide beside the data, more than %.0f%% of the canvas", float64(legW), maxLegendRight*100))
		}
		below = fig.legendBelow(dc)
		if below > 0 && fig.legendNatural(dc) > w {
			out = append(out, fmt.Sprintf("legend is %.0f pt wide, wider than the canvas", float64(fig.legendNatural(dc))))
		}
	case heatFigure:
		ps = []*plot.Plot{fig.main}
		legW = heatBarWidth
		check("colour-bar label", fig.bar.Y.Label.Text, fig.bar.Y.Label.TextStyle, h-axisRoom)
	default:
		return nil
	}
	for _, p := range ps {
		sizes := []struct {
			what string
			sz   vg.Length
		}{{"title", p.Title.TextStyle.Font.Size}, {"x label", p.X.Label.TextStyle.Font.Size}, {"y label", p.Y.Label.TextStyle.Font.Size},
			{"x ticks", p.X.Tick.Label.Font.Size}, {"y ticks", p.Y.Tick.Label.Font.Size}, {"legend", p.Legend.TextStyle.Font.Size}}
		for _, s := range sizes {
			if s.sz < minFontSize {
				out = append(out, fmt.Sprintf("%s at %.1f pt, below %.0f pt", s.what, float64(s.sz), float64(minFontSize)))
			}
		}
		top := p.Title.TextStyle.Height(p.Title.Text)
		check("title", p.Title.Text, p.Title.TextStyle, w-8)
		check("x label", p.X.Label.Text, p.X.Label.TextStyle, w-legW-axisRoom)
		check("y label", p.Y.Label.Text, p.Y.Label.TextStyle, h-top-axisRoom-below)
		out = append(out, tickOverlaps(p, w-legW-axisRoom)...)
	}
	return out
}

// tickOverlaps lists x tick labels that overlap their neighbour on a data
// area width wide.
func tickOverlaps(p *plot.Plot, width vg.Length) []string {
	var out []string
	ticks := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	prevEnd := vg.Length(math.Inf(-1))
	prev := ""
	for _, t := range ticks {
		if t.Label == "" || t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		x := vg.Length(p.X.Norm(t.Value)) * width
		tw := p.X.Tick.Label.Width(t.Label)
		if x-tw/2 < prevEnd+2 {
			out = append(out, fmt.Sprintf("x tick labels %q and %q overlap", prev, t.Label))
		}
		prevEnd, prev = x+tw/2, t.Label
	}
	return out
}
