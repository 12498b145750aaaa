package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/internal/outdir"
	"github.com/rebalsim/rebalsim/scenario"
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

// writeFigure writes fig as base.png and base.svg in the output directory
// dir (outdir's guards).
func writeFigure(dir, base string, fig report.Figure) error {
	for _, format := range []string{"png", "svg"} {
		b, err := report.Render(fig, format)
		if err != nil {
			return err
		}
		if err := outdir.WriteFile(dir, base+"."+format, b); err != nil {
			return err
		}
	}
	return nil
}

// WriteTuneFiles writes DIR/tune.csv (one row per value tried and
// requirement, encoding/csv) and one plot per requirement (PNG and SVG):
// the figure's estimate with its 95 % interval against the parameter, the
// requirement's threshold drawn, the recommended value marked. It returns
// the PNG paths.
func WriteTuneFiles(r *TuneResult, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := outdir.WriteFile(dir, filepath.Join(dir, "tune.csv"), r.csv()); err != nil {
		return nil, err
	}
	var pngs []string
	if fig, err := r.tradeoff(); err != nil {
		return nil, fmt.Errorf("trade-off plot: %w", err)
	} else if fig != nil {
		base := filepath.Join(dir, "tradeoff")
		if err := writeFigure(dir, base, fig); err != nil {
			return nil, err
		}
		pngs = append(pngs, base+".png")
	}
	lo, _ := r.decisive()
	zoomed := !math.IsInf(lo, -1)
	for q, req := range r.Spec.Requirements {
		// The decisive interval, and the whole range beside it (-full).
		for _, full := range []bool{false, true} {
			if full && !zoomed {
				break // not zoomed: the first plot is the whole range
			}
			fig, err := r.plot(q, full)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", req.Text, err)
			}
			base := filepath.Join(dir, fmt.Sprintf("require-%d-%s", q+1, req.Figure))
			if full {
				base += "-full"
			}
			if err := writeFigure(dir, base, fig); err != nil {
				return nil, err
			}
			if !full {
				pngs = append(pngs, base+".png")
			}
		}
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
// combination of the other parameters), titled with the scenario and its
// key settings, in seconds from 1,000 ms on (as the sweep plots), zoomed
// on the decisive interval (the coarse-grid cell where the requirement
// switches from failing to passing, with the bisection's values in it)
// unless full (the whole range hides where the answer is).
func (r *TuneResult) plot(q int, full bool) (report.Figure, error) {
	return r.plotPanel(q, full, false)
}

// figureAt is requirement q, or for q past the requirements the --show
// figure q-len(Requirements).
func (r *TuneResult) figureAt(q int) Requirement {
	if q < len(r.Spec.Requirements) {
		return r.Spec.Requirements[q]
	}
	return r.Spec.Show[q-len(r.Spec.Requirements)]
}

// estimateAt is figure q's estimate at trial t.
func (r *TuneResult) estimateAt(q int, t *Trial) (Estimate, int) {
	if q < len(t.Checks) {
		return t.Checks[q].Est, t.Checks[q].Missing
	}
	e := requirementEstimate(r.figureAt(q), t.runs)
	return e, e.Missing
}

// tradeoff draws every requirement and --show figure against the
// parameter, one panel each, one above the other on the whole range, the
// recommendation marked on each: the picture a design review needs ("no
// false eviction above 11 s; each second costs 1.9 s of crash recovery").
// nil when there is only one figure or several parameters.
func (r *TuneResult) tradeoff() (report.Figure, error) {
	n := len(r.Spec.Requirements) + len(r.Spec.Show)
	if n < 2 || len(r.Spec.Params) > 1 {
		return nil, nil
	}
	var figs []report.Figure
	var names []string
	for q := range n {
		f, err := r.plotPanel(q, true, true)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
		names = append(names, figureName(r.figureAt(q).Figure))
	}
	p0 := r.Spec.Params[0]
	title := r.plotTitle(strings.Join(names, " and "), strings.ReplaceAll(strings.TrimSuffix(p0.Column, "_ms"), "_", " "))
	return report.Stack(title, figs)
}

// plotPanel draws figure q; as a panel of the trade-off figure its title
// is only the figure's name.
func (r *TuneResult) plotPanel(q int, full, panel bool) (report.Figure, error) {
	req := r.figureAt(q)
	p0 := r.Spec.Params[0]
	stat := "mean over seeds"
	if req.Stat != "mean" {
		stat = req.Stat + " over seeds"
	}
	if k, _ := KindOf(req.Figure, req.Stat); k == KindRate {
		stat = "pooled over seeds"
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if !full {
		lo, hi = r.decisive()
	}
	// Units: seconds when every value is at least 1,000 ms.
	xdiv, ydiv := 1.0, 1.0
	xunit := ""
	if p0.Duration || strings.HasSuffix(p0.Column, "_ms") {
		xunit = "ms"
		if p0.Lo >= 1000 {
			xdiv, xunit = 1000, "s"
		}
	}
	yunit := ""
	if figureUnit(req.Figure) == "ms" {
		yunit = "ms"
		big := true
		for i := range r.Trials {
			if e, _ := r.estimateAt(q, &r.Trials[i]); !math.IsNaN(e.Value) && e.Value != 0 && math.Abs(e.Value) < 1000 {
				big = false
			}
		}
		if big && (math.IsNaN(req.Bound) || math.Abs(req.Bound) >= 1000) {
			ydiv, yunit = 1000, "s"
		}
	}
	xname := strings.ReplaceAll(strings.TrimSuffix(p0.Column, "_ms"), "_", " ")
	yname := figureName(req.Figure)
	st := report.Style{
		Title:  map[bool]string{true: yname, false: r.plotTitle(yname, xname)}[panel],
		XLabel: withUnit(xname, xunit, ""),
		YLabel: withUnit(yname, yunit, stat),
	}
	if panel {
		st.YLabel = withUnit(yname, yunit, "")
	}
	var series []report.ThresholdSeries
	index := map[string]int{}
	for ti := range r.Trials {
		t := &r.Trials[ti]
		if x := t.Values[0]; x < lo || x > hi {
			continue
		}
		key := ""
		if len(t.Values) > 1 {
			key = r.Spec.label(append([]float64{0}, t.Values[1:]...))
			key = key[strings.Index(key, " ")+1:] // drop the first parameter
		}
		i, ok := index[key]
		if !ok {
			i = len(series)
			index[key] = i
			series = append(series, report.ThresholdSeries{Name: key, BandLabel: "95% interval\n(" + kindOf(req).Short() + ")"})
		}
		s := &series[i]
		est, missing := r.estimateAt(q, t)
		if t.Invalid != "" || math.IsNaN(est.Value) || missing > 0 {
			s.Bad = append(s.Bad, t.Values[0]/xdiv)
			continue
		}
		s.X = append(s.X, t.Values[0]/xdiv)
		s.Y = append(s.Y, est.Value/ydiv)
		s.Lo = append(s.Lo, est.Lo/ydiv)
		s.Hi = append(s.Hi, est.Hi/ydiv)
	}
	side := "upper"
	if req.Op != "" && req.Op[0] == '>' {
		side = "lower"
	}
	mark, markLabel := math.NaN(), ""
	if r.Recommended >= 0 {
		mark = r.Trials[r.Recommended].Values[0] / xdiv
		markLabel = "recommended\n" + strconv.FormatFloat(mark, 'f', -1, 64)
		if xunit != "" {
			markLabel += " " + xunit
		}
	}
	bound := FormatShort(req.Bound/ydiv) + map[bool]string{true: " " + yunit, false: ""}[yunit != ""]
	return report.Threshold(st, series, req.Bound/ydiv, fmt.Sprintf("required %s %s\n(%s bound)", req.Op, bound, side), mark, markLabel)
}

// plotTitle names the scenario and its key settings on a second line:
// "gc-pause: false evictions vs session timeout" / "6 members, kafka-3.x,
// heartbeat 3 s, session 10 s; 40 seeds per value".
func (r *TuneResult) plotTitle(yname, xname string) string {
	name := r.Spec.ScenarioSource
	var keys []string
	if sc, err := scenario.Parse(r.Spec.ScenarioSource, r.Spec.ScenarioData); err == nil {
		name = sc.Name
		if len(sc.Groups) > 0 {
			g := &sc.Groups[0]
			keys = append(keys, fmt.Sprintf("%d members", g.Members), g.Client.Profile)
			if g.Consumer() {
				keys = append(keys, "consumer protocol")
			} else {
				keys = append(keys, strings.Join(g.Client.Assignors, " then "))
				swept := func(key string) bool {
					for _, p := range r.Spec.Params {
						if strings.HasSuffix(p.Path, key) {
							return true
						}
					}
					return false
				}
				if !swept("heartbeat.interval.ms") {
					keys = append(keys, "heartbeat "+durfmt.Human(g.Client.HeartbeatInterval))
				}
				if !swept("session.timeout.ms") {
					keys = append(keys, "session "+durfmt.Human(g.Client.SessionTimeout))
				}
			}
		}
	}
	keys = append(keys, fmt.Sprintf("%d seeds per value", r.Spec.Seeds))
	return fmt.Sprintf("%s: %s vs %s\n%s", name, yname, xname, strings.Join(keys, ", "))
}

// decisive is the x range the plot zooms on: from the coarse-grid value
// below the pass/fail switch to the one above it (the bisection's values
// lie between). The whole range when there is no switch or several
// parameters.
func (r *TuneResult) decisive() (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if len(r.Spec.Params) > 1 || r.Recommended < 0 || r.Neighbour < 0 {
		return lo, hi
	}
	a, b := r.Trials[r.Neighbour].Values[0], r.Trials[r.Recommended].Values[0]
	if a > b {
		a, b = b, a
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	for _, t := range r.Trials {
		if t.Round != 1 {
			continue
		}
		if x := t.Values[0]; x <= a && x > lo {
			lo = x
		}
		if x := t.Values[0]; x > b && x < hi {
			hi = x
		}
	}
	return lo, hi
}

func kindOf(req Requirement) FigureKind {
	k, _ := KindOf(req.Figure, req.Stat)
	return k
}

// QuantisedRecovery says, in one line, when a recovery_ms requirement or
// --show figure is quantised: at some value tried, its seeds' recoveries
// take at most two distinct values over five or more seeds — they end on
// the members' heartbeat and poll grid (a rebalance is learnt at a
// heartbeat and joined at a poll), so the figure moves in steps of that
// grid as the parameter does, not smoothly. "" otherwise.
func (r *TuneResult) QuantisedRecovery() string {
	n := len(r.Spec.Requirements) + len(r.Spec.Show)
	uses := false
	for q := range n {
		uses = uses || r.figureAt(q).Figure == "recovery_ms"
	}
	if !uses {
		return ""
	}
	fi := figureIndex("recovery_ms")
	for _, t := range r.Trials {
		distinct := map[float64]bool{}
		seeds := 0
		for _, run := range t.runs {
			if v := run[fi]; !math.IsNaN(v) {
				distinct[v] = true
				seeds++
			}
		}
		if seeds >= 5 && len(distinct) <= 2 {
			return fmt.Sprintf("recovery_ms at %s takes %d distinct value(s) over %d seeds: recovery is quantised by the heartbeat and poll grid, so it moves in steps as the parameter does",
				r.Label(t), len(distinct), seeds)
		}
	}
	return ""
}
