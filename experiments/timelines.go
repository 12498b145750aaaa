package experiments

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
)

// Timeline plots (`kind: timeline`): what the group sees over one run of
// each point — one curve per point, the seed the plot names (`seed`,
// default 1), over the time since the run's first fault in seconds (the
// whole run without faults). The run is repeated with
// its trace kept (same seed, same trace: the numbers are those of
// points.csv's run of that seed). y is one of tracing.SeriesFigures
// (tracing.Series steps the trace into the curve).

// firstFault is when the run's first fault started, in seconds (-1: no
// fault): a timeline's x is the time since.
func firstFault(s *harness.Summary) float64 {
	if len(s.Groups) > 0 && s.Groups[0].FirstFaultMs >= 0 {
		return float64(s.Groups[0].FirstFaultMs) / 1000
	}
	return -1
}

func isTimelineFigure(name string) bool {
	return slices.ContainsFunc(tracing.SeriesFigures, func(f struct{ Name, Doc, Unit string }) bool { return f.Name == name })
}

func timelineFigureNames() []string {
	var out []string
	for _, f := range tracing.SeriesFigures {
		out = append(out, f.Name)
	}
	return out
}

// timelineFigure draws a timeline plot: every point's run of the plot's
// seed, one curve each, named by its swept values.
func (r *Results) timelineFigure(p *Plot, st report.Style) (report.Figure, error) {
	e := r.Exp
	doc, unit := "", ""
	for _, f := range tracing.SeriesFigures {
		if f.Name == p.Y {
			doc, unit = f.Doc, f.Unit
		}
	}
	st.XLabel = "time since the first fault (s)"
	if p.XLabel != "" {
		st.XLabel = p.XLabel
	}
	st.YLabel = unit
	if p.YLabel != "" {
		st.YLabel = p.YLabel
	}
	groups := r.groupBy("", p.Series)
	var lines []report.LineSeries
	for _, g := range groups {
		for _, i := range g.points {
			sc, err := e.Scenario(r.Points[i])
			if err != nil {
				return nil, err
			}
			res, err := r.tracedRun(i, p.Seed, func() (*harness.Result, error) {
				return harness.Run(sc, uint64(p.Seed), harness.Options{KeepTrace: true})
			})
			if err != nil {
				return nil, fmt.Errorf("point %s seed %d: %w", r.Points[i].ID, p.Seed, err)
			}
			xs, ys := tracing.Series(sc, res.Trace, p.Y, float64(res.Summary.SimulatedMs)/1000, firstFault(&res.Summary))
			name := g.name
			if name == "" {
				name = "seed " + fmt.Sprint(p.Seed)
			}
			lines = append(lines, report.LineSeries{Name: name, X: xs, Y: ys, NoPoints: true})
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no point to draw %s (%s)", p.Y, doc)
	}
	// The last curve drawn is on top: draw the first point's last, so
	// the experiment's subject (listed first) is never hidden.
	slices.Reverse(lines)
	return report.Line(st, lines, nil)
}

// defaultTimelineTitle names a timeline plot after what it shows.
func defaultTimelineTitle(p *Plot) string {
	name := strings.ReplaceAll(p.Y, "_", " ")
	return fmt.Sprintf("%s over time, seed %d", strings.ToUpper(name[:1])+name[1:], p.Seed)
}

type tracedRun struct {
	once sync.Once
	res  *harness.Result
	err  error
}

// tracedRun runs (once) the traced run of a point and seed that timeline
// plots draw: several plots and both formats draw the same runs, and they
// are drawn concurrently.
func (r *Results) tracedRun(point, seed int, run func() (*harness.Result, error)) (*harness.Result, error) {
	r.tmu.Lock()
	if r.traced == nil {
		r.traced = map[[2]int]*tracedRun{}
	}
	t := r.traced[[2]int{point, seed}]
	if t == nil {
		t = &tracedRun{}
		r.traced[[2]int{point, seed}] = t
	}
	r.tmu.Unlock()
	t.once.Do(func() { t.res, t.err = run() })
	return t.res, t.err
}
