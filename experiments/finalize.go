package experiments

import (
	"errors"
	"fmt"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/rebalsim/rebalsim/experiments/report"
)

// Results are an experiment's finished runs, read back from its point
// files: the input of summary.csv, the plots and the report.
type Results struct {
	Exp    *Experiment
	Points []Point
	// Runs[i][s][f] is figure f of seed s+1 at point i.
	Runs [][][]float64
	// Stats[i][f] summarises figure f over the seeds of point i.
	Stats [][]report.Stats
	rows  [][]string
}

// LoadResults reads every point file of a sweep directory; it fails, naming
// the missing points, unless all are finished.
func LoadResults(e *Experiment, dir string) (*Results, error) {
	pts := e.Points()
	r := &Results{Exp: e, Points: pts}
	figs := FigureNames()
	off := 2 + len(e.Params) // point, params..., seed
	var missing []string
	for _, pt := range pts {
		rows, ok := e.readPoint(dir, pt)
		if !ok {
			missing = append(missing, pt.ID)
			continue
		}
		runs := make([][]float64, len(rows))
		for s, row := range rows {
			cells := csvCells(row)
			if len(cells) != off+len(figs)+1 {
				return nil, fmt.Errorf("%s: row %d has %d cells, want %d", pointPath(dir, pt), s+1, len(cells), off+len(figs)+1)
			}
			v := make([]float64, len(figs))
			for f := range figs {
				v[f] = parseCell(cells[off+f])
			}
			runs[s] = v
		}
		r.Runs = append(r.Runs, runs)
		r.rows = append(r.rows, rows)
	}
	if len(missing) > 0 {
		show := missing
		if len(show) > 10 {
			show = append(show[:10:10], fmt.Sprintf("… %d more", len(missing)-10))
		}
		return nil, fmt.Errorf("%s: %d of %d points not finished (%s); run the missing shards or sweep again",
			dir, len(missing), len(pts), strings.Join(show, ", "))
	}
	for i := range pts {
		st := make([]report.Stats, len(figs))
		col := make([]float64, e.Seeds)
		for f := range figs {
			for s := range r.Runs[i] {
				col[s] = r.Runs[i][s][f]
			}
			st[f] = report.Summarize(col)
		}
		r.Stats = append(r.Stats, st)
	}
	return r, nil
}

// figureIndex returns the column of a figure in Runs and Stats.
func figureIndex(name string) int {
	for i, f := range figureDefs {
		if f.name == name {
			return i
		}
	}
	panic("experiments: unknown figure " + name)
}

// Finalize writes points.csv, summary.csv and every plot (PNG and SVG)
// from the point files of dir. Each file is written atomically. The bytes
// depend only on the point files, so any worker count, any sharding and
// any resume give the same files.
func Finalize(e *Experiment, dir string) error {
	r, err := LoadResults(e, dir)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "points.csv"), r.pointsCSV()); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "summary.csv"), r.summaryCSV()); err != nil {
		return err
	}
	if err := r.writeTidy(dir); err != nil {
		return err
	}
	// Each plot × format is drawn on its own goroutine (figures are built
	// per job: drawing one mutates its plot for a moment, so two renders
	// never share a figure). Files are independent, so the order in which
	// they are written changes no byte.
	formats := []string{"png", "svg"}
	errs := make([]error, len(e.Plots)*len(formats))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	for i := range e.Plots {
		for j, format := range formats {
			wg.Add(1)
			sem <- struct{}{}
			go func(i, j int, format string) {
				defer wg.Done()
				defer func() { <-sem }()
				defer func() {
					// gonum/plot panics on a log axis with nothing above 0;
					// a plot is never worth losing the sweep for.
					if p := recover(); p != nil {
						errs[i*len(formats)+j] = fmt.Errorf("%s:%d: plot %s: cannot draw it (%v): a log axis (log_x, log_y) needs values above 0; remove it and run the sweep again (finished points are kept)",
							e.Source, e.Plots[i].Line, e.Plots[i].File, p)
					}
				}()
				fig, err := r.figure(&e.Plots[i])
				if err != nil {
					errs[i*len(formats)+j] = fmt.Errorf("%s:%d: plot %s: %w", e.Source, e.Plots[i].Line, e.Plots[i].File, err)
					return
				}
				b, err := report.Render(fig, format)
				if err == nil {
					err = atomicfile.WriteFile(filepath.Join(dir, e.Plots[i].File+"."+format), b)
				}
				errs[i*len(formats)+j] = err
			}(i, j, format)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Results) pointsCSV() []byte {
	var b strings.Builder
	b.WriteString(strings.Join(r.Exp.header(), ",") + "\n")
	for _, rows := range r.rows {
		for _, row := range rows {
			b.WriteString(row + "\n")
		}
	}
	return []byte(b.String())
}

var statNames = []string{"mean", "p50", "p95", "p99", "ci95_lo", "ci95_hi"}

func statValues(s report.Stats) []float64 {
	return []float64{s.Mean, s.P50, s.P95, s.P99, s.CILo, s.CIHi}
}

// summaryCSV: one row per point: the point, its parameters, the number of
// seeds, then for each figure its mean, p50, p95, p99, ci95_lo, ci95_hi
// over the seeds (report.Stats documents the methods).
func (r *Results) summaryCSV() []byte {
	e := r.Exp
	h := []string{"point"}
	h = append(h, e.columns()...)
	h = append(h, "seeds")
	for _, f := range FigureNames() {
		for _, s := range statNames {
			h = append(h, f+"_"+s)
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(h, ",") + "\n")
	for i, pt := range r.Points {
		cells := []string{pt.ID}
		for j, p := range e.Params {
			cells = append(cells, p.Values[pt.Values[j]].Text)
		}
		cells = append(cells, fmt.Sprint(e.Seeds))
		for _, st := range r.Stats[i] {
			for _, v := range statValues(st) {
				cells = append(cells, fmtSummary(v))
			}
		}
		b.WriteString(csvLine(cells) + "\n")
	}
	return []byte(b.String())
}

// stat picks the statistic a plot asks for.
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

// axisLabel turns a column or figure name into an axis label with its
// unit: session_timeout_ms becomes "session timeout (ms)".
func axisLabel(name string) string {
	units := []struct{ suffix, unit string }{
		{"_ms_mean", "ms, mean"}, {"_ms_p50", "ms, median"}, {"_ms_p95", "ms, p95"}, {"_ms_p99", "ms, p99"}, {"_ms_max", "ms, max"},
		{"_ms", "ms"}, {"_partition_seconds", "partition-s"}, {"_seconds", "s"}, {"_per_member_hour", "per member-hour"}, {"_hours", "h"}, {"_probability", "probability"},
	}
	for _, u := range units {
		if base, ok := strings.CutSuffix(name, u.suffix); ok {
			return strings.ReplaceAll(base, "_", " ") + " (" + u.unit + ")"
		}
	}
	return strings.ReplaceAll(name, "_", " ")
}

// colourBarLabel labels a heat map's colour bar: the figure with its unit,
// or, when that is too long for the bar's height, only the unit (the
// plot's title names the figure).
func colourBarLabel(fig, stat string) string {
	l := axisLabel(fig)
	if len(l) > 30 {
		if i := strings.LastIndex(l, "("); i >= 0 {
			l = strings.Trim(l[i:], "()")
		} else {
			l = "value"
		}
	}
	return l + ", " + stat
}

// seriesLabel names a curve or bar by a parameter value, with its unit:
// session_timeout_ms and 6000 become "session timeout 6000 ms".
func seriesLabel(column, value string) string {
	if base, ok := strings.CutSuffix(column, "_ms"); ok {
		return strings.ReplaceAll(base, "_", " ") + " " + value + " ms"
	}
	return strings.ReplaceAll(column, "_", " ") + " " + value
}

func statLabel(stat string) string {
	if stat == "mean" {
		return "mean"
	}
	return stat + " over seeds"
}

// figure builds one plot from the results.
func (r *Results) figure(p *Plot) (report.Figure, error) {
	e := r.Exp
	st := report.Style{Title: p.Title, XLabel: p.XLabel, YLabel: p.YLabel, LogX: p.LogX, LogY: p.LogY}
	if st.Title == "" {
		st.Title = e.Title
	}
	switch p.Kind {
	case "line":
		x := e.paramByName(p.X)
		fi := figureIndex(p.Y)
		if st.XLabel == "" {
			st.XLabel = axisLabel(x.Column)
		}
		if st.YLabel == "" {
			st.YLabel = axisLabel(p.Y) + ", " + statLabel(p.Stat)
		}
		xs, cats := axisValues(x)
		var series []report.LineSeries
		for _, g := range r.groupBy(p.X) {
			s := report.LineSeries{Name: g.name}
			for _, i := range g.points {
				pt := r.Points[i]
				s.X = append(s.X, xs[pt.Values[r.paramIndex(p.X)]])
				s.Y = append(s.Y, pick(r.Stats[i][fi], p.Stat))
				if p.Stat == "mean" {
					s.Lo = append(s.Lo, r.Stats[i][fi].CILo)
					s.Hi = append(s.Hi, r.Stats[i][fi].CIHi)
				}
			}
			if p.Stat != "mean" {
				s.Lo, s.Hi = nil, nil
			}
			series = append(series, s)
		}
		return report.Line(st, series, cats)
	case "bar":
		x := e.paramByName(p.X)
		fi := figureIndex(p.Y)
		if st.XLabel == "" {
			st.XLabel = axisLabel(x.Column)
		}
		if st.YLabel == "" {
			st.YLabel = axisLabel(p.Y) + ", " + statLabel(p.Stat)
		}
		cats := valueTexts(x)
		xi := r.paramIndex(p.X)
		var series []report.BarSeries
		for _, g := range r.groupBy(p.X) {
			s := report.BarSeries{Name: g.name, Y: nanSlice(len(cats)), Lo: nanSlice(len(cats)), Hi: nanSlice(len(cats))}
			for _, i := range g.points {
				c := r.Points[i].Values[xi]
				s.Y[c] = pick(r.Stats[i][fi], p.Stat)
				s.Lo[c], s.Hi[c] = r.Stats[i][fi].CILo, r.Stats[i][fi].CIHi
			}
			if p.Stat != "mean" {
				s.Lo, s.Hi = nil, nil
			}
			series = append(series, s)
		}
		return report.Bar(st, cats, series)
	case "box":
		x := e.paramByName(p.X)
		fi := figureIndex(p.Y)
		if st.XLabel == "" {
			st.XLabel = axisLabel(x.Column)
		}
		if st.YLabel == "" {
			st.YLabel = axisLabel(p.Y) + ", per run"
		}
		xi := r.paramIndex(p.X)
		cats := valueTexts(x)
		samples := make([]report.Sample, len(cats))
		for c := range cats {
			samples[c].Name = cats[c]
		}
		for i, pt := range r.Points {
			c := pt.Values[xi]
			for _, run := range r.Runs[i] {
				samples[c].Values = append(samples[c].Values, run[fi])
			}
		}
		return report.Box(st, samples)
	case "cdf":
		fi := figureIndex(p.X)
		if st.XLabel == "" {
			st.XLabel = axisLabel(p.X)
		}
		var samples []report.Sample
		groups := []group{{name: "all runs", points: seq(len(r.Points))}}
		if p.Series != "" {
			groups = r.groupOnly(p.Series)
		}
		for _, g := range groups {
			s := report.Sample{Name: g.name}
			for _, i := range g.points {
				for _, run := range r.Runs[i] {
					s.Values = append(s.Values, run[fi])
				}
			}
			samples = append(samples, s)
		}
		return report.CDF(st, samples)
	case "heatmap":
		x, y := e.paramByName(p.X), e.paramByName(p.Y)
		fi := figureIndex(p.Z)
		if st.XLabel == "" {
			st.XLabel = axisLabel(x.Column)
		}
		if st.YLabel == "" {
			st.YLabel = axisLabel(y.Column)
		}
		h := report.Heat{XCats: valueTexts(x), YCats: valueTexts(y), ZLabel: colourBarLabel(p.Z, p.Stat)}
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
			h.Z[pt.Values[yi]][pt.Values[xi]] += v
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
		if len(e.Params) > 2 {
			h.ZLabel += " (averaged over other parameters)"
		}
		return report.Heatmap(st, h)
	}
	return nil, fmt.Errorf("unknown plot kind %q", p.Kind)
}

type group struct {
	name   string
	points []int
}

func (r *Results) paramIndex(name string) int {
	for j, p := range r.Exp.Params {
		if p.Column == name || p.Path == name {
			return j
		}
	}
	panic("experiments: unknown parameter " + name)
}

// groupBy splits the points into curves: all points that agree on every
// parameter except x form one curve, in grid order, named by the values of
// those other parameters.
func (r *Results) groupBy(x string) []group {
	xi := r.paramIndex(x)
	var out []group
	idx := map[string]int{}
	for i, pt := range r.Points {
		var parts []string
		for j, p := range r.Exp.Params {
			if j != xi {
				parts = append(parts, seriesLabel(p.Column, p.Values[pt.Values[j]].Text))
			}
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

// groupOnly splits the points by the value of one parameter (others pooled).
func (r *Results) groupOnly(series string) []group {
	si := r.paramIndex(series)
	p := r.Exp.Params[si]
	out := make([]group, len(p.Values))
	for v := range p.Values {
		out[v].name = seriesLabel(p.Column, p.Values[v].Text)
	}
	for i, pt := range r.Points {
		out[pt.Values[si]].points = append(out[pt.Values[si]].points, i)
	}
	return out
}

// axisValues returns numeric x positions for a parameter's values, or, when
// some value is not a number, positions 0..n-1 and their labels.
func axisValues(p *Param) ([]float64, report.Categories) {
	xs := make([]float64, len(p.Values))
	for i, v := range p.Values {
		if !v.IsNum {
			for k := range xs {
				xs[k] = float64(k)
			}
			return xs, valueTexts(p)
		}
		xs[i] = v.Num
	}
	return xs, nil
}

func valueTexts(p *Param) report.Categories {
	out := make(report.Categories, len(p.Values))
	for i, v := range p.Values {
		out[i] = v.Text
	}
	return out
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
