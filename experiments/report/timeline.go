package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rebalsim/rebalsim/harness/tracing"
)

// Span is one state of one track over [Start, End) seconds, and Mark an
// instant on a track (its Kind a key of MarkStyles): the timeline data
// tracing.TimelineOf reads from a run's trace.
type (
	Span = tracing.Span
	Mark = tracing.Mark
)

// StateColors colours the client's MemberState and the coordinator's group
// states (the same hue for the matching phases).
var StateColors = map[string]color.Color{
	"UNJOINED":             color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
	"Empty":                color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
	"PREPARING_REBALANCE":  color.RGBA{R: 0xfd, G: 0xae, B: 0x61, A: 0xff},
	"PreparingRebalance":   color.RGBA{R: 0xfd, G: 0xae, B: 0x61, A: 0xff},
	"COMPLETING_REBALANCE": color.RGBA{R: 0xfe, G: 0xe0, B: 0x8b, A: 0xff},
	"CompletingRebalance":  color.RGBA{R: 0xfe, G: 0xe0, B: 0x8b, A: 0xff},
	"STABLE":               color.RGBA{R: 0x66, G: 0xbd, B: 0x63, A: 0xff},
	"Stable":               color.RGBA{R: 0x66, G: 0xbd, B: 0x63, A: 0xff},
	"Dead":                 color.RGBA{R: 0x54, G: 0x54, B: 0x54, A: 0xff},
	"PAUSED":               color.RGBA{R: 0x7b, G: 0x32, B: 0x94, A: 0xff},
	// The consumer protocol (KIP-848): the client's MemberState and the
	// consumer group's states, in the hues of the matching classic phases.
	"JOINING":         color.RGBA{R: 0xfd, G: 0xae, B: 0x61, A: 0xff},
	"Assigning":       color.RGBA{R: 0xfd, G: 0xae, B: 0x61, A: 0xff},
	"RECONCILING":     color.RGBA{R: 0xfe, G: 0xe0, B: 0x8b, A: 0xff},
	"ACKNOWLEDGING":   color.RGBA{R: 0xfe, G: 0xe0, B: 0x8b, A: 0xff},
	"Reconciling":     color.RGBA{R: 0xfe, G: 0xe0, B: 0x8b, A: 0xff},
	"UNSUBSCRIBED":    color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
	"STALE":           color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
	"FENCED":          color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
	"PREPARE_LEAVING": color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
	"LEAVING":         color.RGBA{R: 0xbd, G: 0xbd, B: 0xbd, A: 0xff},
}

// markStyle is how one kind of instant is drawn.
type markStyle struct {
	label string
	shape draw.GlyphDrawer
	color color.Color
}

// markStyles in drawing order: faults first, so the consequences drawn
// after them stay visible.
var markStyles = []struct {
	kind string
	markStyle
}{
	{"fault", markStyle{"fault starts", draw.BoxGlyph{}, color.Black}},
	{"coordinator-dead", markStyle{"coordinator-dead mark", draw.TriangleGlyph{}, color.RGBA{R: 0x2c, G: 0x7b, B: 0xb6, A: 0xff}}},
	{"eviction", markStyle{"eviction", draw.CrossGlyph{}, color.RGBA{R: 0xd7, G: 0x19, B: 0x1c, A: 0xff}}},
	// The online migration (KIP-848): the group became a consumer group,
	// or a classic one again.
	{"to-consumer", markStyle{"group → consumer (upgrade)", draw.PyramidGlyph{}, color.RGBA{R: 0x5e, G: 0x3c, B: 0x99, A: 0xff}}},
	{"to-classic", markStyle{"group → classic (downgrade)", draw.CircleGlyph{}, color.RGBA{R: 0x5e, G: 0x3c, B: 0x99, A: 0xff}}},
}

// legendNames are the short legend labels of the states.
var legendNames = map[string]string{
	"UNJOINED":             "unjoined / Empty",
	"PREPARING_REBALANCE":  "preparing rebalance",
	"COMPLETING_REBALANCE": "completing rebalance",
	"STABLE":               "stable",
	"PAUSED":               "paused (whole process)",
	"JOINING":              "joining / Assigning (KIP-848)",
	"RECONCILING":          "reconciling (KIP-848)",
	"UNSUBSCRIBED":         "unsubscribed / fenced / stale",
}

type timelineFigure struct {
	plotFigure
	tracks int
}

// Size: wide enough for the time axis beside the legend, a band per track.
func (f timelineFigure) Size() (vg.Length, vg.Length) {
	h := vg.Length(f.tracks)*0.55*vg.Centimeter + 3*vg.Centimeter
	return 24 * vg.Centimeter, max(h, 9*vg.Centimeter)
}

// Timeline draws one horizontal band per track (a member, or a group's
// coordinator) coloured by state over time, with instants marked on top:
// the picture of one run a reviewer can read without the trace.
func Timeline(title string, tracks []string, spans []Span, marks []Mark) (Figure, error) {
	if len(tracks) == 0 {
		return nil, fmt.Errorf("report: timeline without tracks")
	}
	p := newPlot(Style{Title: title, XLabel: "simulated time (s)"})
	p.Y.Tick.Marker = timelineTicks(tracks)
	p.Y.Min, p.Y.Max = -0.6, float64(len(tracks))-0.4
	p.Y.Tick.Label.Font.Size = 9
	states := map[string]bool{}
	for _, s := range spans {
		c, ok := StateColors[s.State]
		if !ok {
			c = color.Gray{Y: 0x80}
		}
		y := float64(len(tracks) - 1 - s.Track)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: s.Start, Y: y - 0.35}, {X: s.End, Y: y - 0.35}, {X: s.End, Y: y + 0.35}, {X: s.Start, Y: y + 0.35}})
		if err != nil {
			return nil, err
		}
		poly.Color = c
		poly.LineStyle.Width = 0
		p.Add(poly)
		states[s.State] = true
	}
	for _, name := range []string{"UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE", "PAUSED", "JOINING", "RECONCILING", "UNSUBSCRIBED"} {
		if states[name] || states[coordName(name)] || consumerLegend(name, states) {
			swatch, _ := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}})
			swatch.Color = StateColors[name]
			swatch.LineStyle.Width = 0
			p.Legend.Add(legendNames[name], swatch)
		}
	}
	for _, ms := range markStyles {
		var xys plotter.XYs
		for _, m := range marks {
			if m.Kind == ms.kind {
				xys = append(xys, plotter.XY{X: m.At, Y: float64(len(tracks) - 1 - m.Track)})
			}
		}
		if len(xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: ms.color, Radius: vg.Points(3.5), Shape: ms.shape}
		p.Add(sc)
		p.Legend.Add(ms.label, sc)
	}
	return timelineFigure{plotFigure{p}, len(tracks)}, nil
}

func coordName(s string) string {
	switch s {
	case "UNJOINED":
		return "Empty"
	case "PREPARING_REBALANCE":
		return "PreparingRebalance"
	case "COMPLETING_REBALANCE":
		return "CompletingRebalance"
	case "STABLE":
		return "Stable"
	}
	return s
}

// timelineTicks labels each track's band (top track first).
type timelineTicks []string

func (t timelineTicks) Ticks(min, max float64) []plot.Tick {
	out := make([]plot.Tick, len(t))
	for i, name := range t {
		out[i] = plot.Tick{Value: float64(len(t) - 1 - i), Label: name}
	}
	return out
}

// consumerLegend: a consumer-protocol state drawn under another legend
// entry's colour (ACKNOWLEDGING under RECONCILING, the group's Assigning
// under JOINING, STALE and FENCED under UNSUBSCRIBED).
func consumerLegend(name string, states map[string]bool) bool {
	switch name {
	case "JOINING":
		return states["Assigning"]
	case "RECONCILING":
		return states["ACKNOWLEDGING"] || states["Reconciling"]
	case "UNSUBSCRIBED":
		return states["STALE"] || states["FENCED"] || states["LEAVING"] || states["PREPARE_LEAVING"]
	}
	return false
}
