package experiments

import (
	"fmt"
	"math"
	"strings"

	"github.com/rebalsim/rebalsim/experiments/report"
)

// Plot texts and scales (plots a reviewer can paste as they are): every
// axis, colour bar and legend entry carries its unit; milliseconds become
// seconds when the values reach 1,000 ms; a legend names only parameters
// that vary; a plot without a title gets one from its figure and axes.
// A label the user wrote is kept; its unit is added in parentheses unless
// it already has some, and an axis with such a label is not rescaled.

// scaled is an axis: its label and the factor its values are divided by.
type scaled struct {
	label string
	div   float64
}

// figureName is a figure's name without its unit suffix, in words:
// rebalance_duration_ms_p95 → "rebalance duration p95".
func figureName(fig string) string {
	// Names that say which count they are ("rebalances" alone is three
	// different counts).
	switch fig {
	case "rebalance_count", "settle_episodes":
		return "settle episodes"
	case "rebalances_after_fault":
		return "settle episodes from the fault"
	case "rebalances_per_member_hour":
		return "settle episodes"
	case "generations_after_fault":
		return "generations from the fault"
	case "false_coordinator_dead_marks", "false_coordinator_dead_marks_per_member_hour":
		return "false dead marks"
	}
	base := fig
	for _, suf := range []string{"_per_member_hour", "_partition_seconds", "_hours"} {
		if b, ok := strings.CutSuffix(base, suf); ok {
			base = b
			if suf == "_partition_seconds" {
				base += "_partition_time"
			}
		}
	}
	base = strings.Replace(base, "_ms_", "_", 1)
	base = strings.TrimSuffix(base, "_ms")
	return strings.ReplaceAll(base, "_", " ")
}

// figureUnit is the unit of a figure's values, "ms" for durations.
func figureUnit(fig string) string {
	switch {
	case strings.Contains(fig, "_ms"):
		return "ms"
	case strings.HasSuffix(fig, "_per_member_hour"):
		return "per member-hour"
	case strings.HasSuffix(fig, "_partition_seconds") || strings.Contains(fig, "_partition_seconds_"):
		return "partition-s"
	case fig == "member_hours":
		return "member-h"
	case isProportion(fig):
		return "fraction of runs"
	case fig == "final_generation":
		return "generation"
	}
	return "per run"
}

// statWords says which statistic over seeds a plot shows.
func statWords(stat string) string {
	if stat == "mean" {
		return "mean over seeds"
	}
	return stat + " over seeds"
}

// withUnit adds "(unit, extra)" to a label unless it already has a
// parenthesis (the user wrote the unit).
func withUnit(label, unit, extra string) string {
	if strings.Contains(label, "(") {
		return label
	}
	parts := []string{}
	if unit != "" {
		parts = append(parts, unit)
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	if len(parts) == 0 {
		return label
	}
	return label + " (" + strings.Join(parts, ", ") + ")"
}

// figureAxis is the axis of a figure whose plotted values are vals.
func figureAxis(fig, explicit, extra string, vals []float64) scaled {
	unit, div := figureUnit(fig), 1.0
	if unit == "ms" && (explicit == "" || !strings.Contains(explicit, "(")) && maxFinite(vals) >= 1000 {
		unit, div = "s", 1000
	}
	label := explicit
	if label == "" {
		label = figureName(fig)
	}
	if unit == "per run" && extra != "" {
		return scaled{withUnit(label, "", "per run, "+extra), div}
	}
	return scaled{withUnit(label, unit, extra), div}
}

// paramName is a parameter's column in words without its unit suffix.
func paramName(p *Param) string {
	base := p.Column
	if p.Unit != "" {
		base = strings.TrimSuffix(base, "_"+p.Unit)
	}
	return strings.ReplaceAll(base, "_", " ")
}

// paramAxis is the axis of a swept parameter.
func paramAxis(p *Param, explicit string) scaled {
	div := 1.0
	unit := p.Unit
	if unit == "ms" && (explicit == "" || !strings.Contains(explicit, "(")) {
		big := true
		for _, v := range p.Values {
			if v.IsNum && v.Num != 0 && math.Abs(v.Num) < 1000 {
				big = false
			}
		}
		if big {
			unit, div = "s", 1000
		}
	}
	if isLossPath(p.Path) && (explicit == "" || !strings.Contains(explicit, "(")) {
		// A probability of loss reads as a percentage (every axis carries a
		// unit).
		unit, div = "%", 0.01
	}
	label := explicit
	if label == "" {
		label = paramName(p)
	}
	return scaled{withUnit(label, unit, ""), div}
}

// isLossPath: the path sets a packet-loss probability (network.loss, its
// per-direction keys, a loss fault's value).
func isLossPath(path string) bool {
	return path == "network.loss" || strings.HasPrefix(path, "network.loss.") ||
		strings.HasPrefix(path, "faults[") && strings.HasSuffix(path, "].loss")
}

// valueText writes value v of p on an axis scaled by a.
func valueText(p *Param, v int, a scaled) string {
	val := p.Values[v]
	if val.IsNum && a.div != 1 {
		return report.TickLabel(val.Num / a.div)
	}
	return val.Text
}

// seriesName names a curve by a parameter's value, with its unit:
// "session timeout 6 s", "network loss 0.01", "profile kafka-2.x".
func seriesName(p *Param, v int) string {
	a := paramAxis(p, "")
	unit := p.Unit
	switch a.div {
	case 1000:
		unit = "s"
	case 0.01:
		unit = "%"
	}
	s := paramName(p) + " " + valueText(p, v, a)
	if unit != "" {
		s += " " + unit
	}
	return s
}

func maxFinite(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			m = math.Max(m, x)
		}
	}
	return m
}

func divide(xs []float64, d float64) []float64 {
	if d == 1 || xs == nil {
		return xs
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / d
	}
	return out
}

// defaultTitle names a plot after what it shows.
func defaultTitle(p *Plot, e *Experiment) string {
	name := func(col string) string {
		if q := e.paramByName(col); q != nil {
			return paramName(q)
		}
		return figureName(col)
	}
	cap := func(s string) string {
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + s[1:]
	}
	switch p.Kind {
	case "heatmap":
		return cap(fmt.Sprintf("%s by %s and %s", figureName(p.Z), name(p.X), name(p.Y)))
	case "cdf":
		t := "Distribution of " + figureName(p.X) + " over runs"
		if p.Series != "" {
			t += " by " + name(p.Series)
		}
		return t
	}
	t := cap(fmt.Sprintf("%s by %s", figureName(p.Y), name(p.X)))
	if p.Series != "" {
		t += " and " + name(p.Series)
	}
	return t
}

// pick picks the statistic a plot asks for.
func pick(s report.Stats, stat string) float64 {
	switch stat {
	case "mean":
		return s.Mean
	case "p50":
		return s.P50
	case "p95":
		return s.P95
	case "p99":
		return s.P99
	}
	panic("experiments: unknown stat " + stat)
}

// errEmptyPlot says a plot would be an empty frame.
func errEmptyPlot(fig string) error {
	return fmt.Errorf("no run has a value of %s (%s), so there is nothing to draw; an empty frame is not a plot", fig, FigureDoc(fig))
}

// figure builds one plot from the results.
func (r *Results) figure(p *Plot) (report.Figure, error) {
	e := r.Exp
	st := report.Style{Title: p.Title, LogX: p.LogX, LogY: p.LogY}
	if st.Title == "" {
		st.Title = defaultTitle(p, e)
	}
	switch p.Kind {
	case "timeline":
		if p.Title == "" {
			st.Title = defaultTimelineTitle(p)
		}
		return r.timelineFigure(p, st)
	case "line", "bar":
		x := e.paramByName(p.X)
		xi := r.paramIndex(p.X)
		fi := figureIndex(p.Y)
		var all []float64
		for i := range r.Points {
			all = append(all, pick(r.Stats[i][fi], p.Stat))
		}
		if math.IsInf(maxFinite(all), -1) {
			return nil, errEmptyPlot(p.Y)
		}
		xa := paramAxis(x, p.XLabel)
		ya := figureAxis(p.Y, p.YLabel, statWords(p.Stat), all)
		st.XLabel, st.YLabel = xa.label, ya.label
		groups := r.groupBy(p.X, p.Series)
		if p.Kind == "bar" {
			cats := make(report.Categories, len(x.Values))
			for v := range x.Values {
				cats[v] = valueText(x, v, xa)
			}
			var series []report.BarSeries
			for _, g := range groups {
				s := report.BarSeries{Name: g.name, Y: nanSlice(len(cats)), Lo: nanSlice(len(cats)), Hi: nanSlice(len(cats))}
				for _, i := range g.points {
					c := r.Points[i].Values[xi]
					s.Y[c] = pick(r.Stats[i][fi], p.Stat) / ya.div
					s.Lo[c], s.Hi[c] = r.Stats[i][fi].CILo/ya.div, r.Stats[i][fi].CIHi/ya.div
				}
				if p.Stat != "mean" {
					s.Lo, s.Hi = nil, nil
				}
				series = append(series, s)
			}
			return report.Bar(st, cats, series)
		}
		xs, cats := axisValues(x, xa)
		if cats == nil {
			st.XTicks = xs
		}
		var series []report.LineSeries
		for _, g := range groups {
			s := report.LineSeries{Name: g.name}
			for _, i := range g.points {
				s.X = append(s.X, xs[r.Points[i].Values[xi]])
				s.Y = append(s.Y, pick(r.Stats[i][fi], p.Stat)/ya.div)
				s.Lo = append(s.Lo, r.Stats[i][fi].CILo/ya.div)
				s.Hi = append(s.Hi, r.Stats[i][fi].CIHi/ya.div)
			}
			if p.Stat != "mean" {
				s.Lo, s.Hi = nil, nil
			}
			series = append(series, s)
		}
		return report.Line(st, series, cats)
	case "box":
		x := e.paramByName(p.X)
		xi := r.paramIndex(p.X)
		fi := figureIndex(p.Y)
		var all []float64
		for i := range r.Points {
			for _, run := range r.Runs[i] {
				all = append(all, run[fi])
			}
		}
		if math.IsInf(maxFinite(all), -1) {
			return nil, errEmptyPlot(p.Y)
		}
		xa := paramAxis(x, p.XLabel)
		ya := figureAxis(p.Y, p.YLabel, "each run", all)
		st.XLabel, st.YLabel = xa.label, ya.label
		cats := make(report.Categories, len(x.Values))
		for v := range x.Values {
			cats[v] = valueText(x, v, xa)
		}
		var series []report.BoxSeries
		for _, g := range r.groupBy(p.X, p.Series) {
			s := report.BoxSeries{Name: g.name, Values: make([][]float64, len(cats))}
			for _, i := range g.points {
				c := r.Points[i].Values[xi]
				for _, run := range r.Runs[i] {
					s.Values[c] = append(s.Values[c], run[fi]/ya.div)
				}
			}
			series = append(series, s)
		}
		return report.Box(st, cats, series)
	case "cdf":
		fi := figureIndex(p.X)
		var all []float64
		for i := range r.Points {
			for _, run := range r.Runs[i] {
				all = append(all, run[fi])
			}
		}
		if math.IsInf(maxFinite(all), -1) {
			return nil, errEmptyPlot(p.X)
		}
		xa := figureAxis(p.X, p.XLabel, "each run", all)
		st.XLabel = xa.label
		st.YLabel = p.YLabel
		groups := r.groupBy("", p.Series)
		var samples []report.Sample
		for _, g := range groups {
			s := report.Sample{Name: g.name}
			for _, i := range g.points {
				for _, run := range r.Runs[i] {
					s.Values = append(s.Values, run[fi]/xa.div)
				}
			}
			samples = append(samples, s)
		}
		if len(samples) == 1 {
			samples[0].Name = "" // one curve: no legend
		}
		return report.CDF(st, samples)
	case "heatmap":
		x, y := e.paramByName(p.X), e.paramByName(p.Y)
		fi := figureIndex(p.Z)
		xa, yaxis := paramAxis(x, p.XLabel), paramAxis(y, p.YLabel)
		st.XLabel, st.YLabel = xa.label, yaxis.label
		var all []float64
		for i := range r.Points {
			all = append(all, pick(r.Stats[i][fi], p.Stat))
		}
		if math.IsInf(maxFinite(all), -1) {
			return nil, errEmptyPlot(p.Z)
		}
		za := figureAxis(p.Z, "", statWords(p.Stat), all)
		h := report.Heat{ZLabel: za.label}
		for v := range x.Values {
			h.XCats = append(h.XCats, valueText(x, v, xa))
		}
		for v := range y.Values {
			h.YCats = append(h.YCats, valueText(y, v, yaxis))
		}
		h.Z = make([][]float64, len(h.YCats))
		cnt := make([][]int, len(h.YCats))
		for rr := range h.Z {
			h.Z[rr] = make([]float64, len(h.XCats))
			cnt[rr] = make([]int, len(h.XCats))
		}
		xi, yi := r.paramIndex(p.X), r.paramIndex(p.Y)
		// Other swept parameters, if any, are averaged over (said in the label).
		for i, pt := range r.Points {
			v := pick(r.Stats[i][fi], p.Stat)
			if math.IsNaN(v) {
				continue
			}
			h.Z[pt.Values[yi]][pt.Values[xi]] += v / za.div
			cnt[pt.Values[yi]][pt.Values[xi]]++
		}
		for rr := range h.Z {
			for c := range h.Z[rr] {
				if cnt[rr][c] == 0 {
					h.Z[rr][c] = math.NaN()
				} else {
					h.Z[rr][c] /= float64(cnt[rr][c])
				}
			}
		}
		if len(e.varying()) > 2 {
			st.Title += " (averaged over other parameters)"
		}
		return report.Heatmap(st, h)
	}
	return nil, fmt.Errorf("unknown plot kind %q", p.Kind)
}

// varying lists the parameters with more than one value.
func (e *Experiment) varying() []*Param {
	var out []*Param
	for i := range e.Params {
		if len(e.Params[i].Values) > 1 {
			out = append(out, &e.Params[i])
		}
	}
	return out
}

// groupBy splits the points into curves (or bar, box or CDF groups): all
// points that agree on every varying parameter except x form one group, in
// grid order, named by the values of those parameters, series first;
// parameters with one value are not named (they do not vary). Runs of
// different parameter values are never pooled.
func (r *Results) groupBy(x, series string) []group {
	var named []int
	if series != "" {
		named = append(named, r.paramIndex(series))
	}
	for j, p := range r.Exp.Params {
		if p.Column != x && p.Column != series && len(p.Values) > 1 {
			named = append(named, j)
		}
	}
	var out []group
	idx := map[string]int{}
	for i, pt := range r.Points {
		var parts []string
		for _, j := range named {
			parts = append(parts, seriesName(&r.Exp.Params[j], pt.Values[j]))
		}
		name := strings.Join(parts, ", ")
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, group{name: name})
		}
		out[k].points = append(out[k].points, i)
	}
	return out
}

// axisValues returns numeric x positions for a parameter's values (scaled
// as the axis), or, when some value is not a number, positions 0..n-1 and
// their labels.
func axisValues(p *Param, a scaled) ([]float64, report.Categories) {
	xs := make([]float64, len(p.Values))
	for i, v := range p.Values {
		if !v.IsNum {
			cats := make(report.Categories, len(p.Values))
			for k := range xs {
				xs[k] = float64(k)
				cats[k] = p.Values[k].Text
			}
			return xs, cats
		}
		xs[i] = v.Num / a.div
	}
	return xs, nil
}

func isProportion(fig string) bool {
	k, _ := KindOf(fig, "mean")
	return k == KindProportion
}

// axisLabel is the label of a figure or a column with its unit, for
// callers that have no values to scale (tune and compare plots):
// session_timeout_ms becomes "session timeout (ms)", false_evictions
// "false evictions (per run)".
func axisLabel(name string) string {
	if isFigure(name) {
		return figureAxis(name, "", "", nil).label
	}
	if base, ok := strings.CutSuffix(name, "_ms"); ok {
		return strings.ReplaceAll(base, "_", " ") + " (ms)"
	}
	return strings.ReplaceAll(name, "_", " ")
}
