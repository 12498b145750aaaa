package experiments

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/model/protocol"
	"github.com/rebalsim/rebalsim/scenario"
)

// Timeline plots (`kind: timeline`): what the group sees over one run of
// each point — one curve per point, the seed the plot names (`seed`,
// default 1), over the time since the run's first fault in seconds (the
// whole run without faults). The run is repeated with
// its trace kept (same seed, same trace: the numbers are those of
// points.csv's run of that seed). y is one of timelineFigures.
var timelineFigures = []struct{ name, doc, unit string }{
	{"generation", "the group's coordinator generation (classic) or group epoch (consumer protocol), as completed", "generation / epoch"},
	{"owned_partitions", "partitions that have an owner (a live member holding them), time-weighted mean over each second (an instant's dip of an eager rebalance would otherwise fill the plot)", "partitions, 1 s mean"},
	{"unowned_partitions", "partitions of the group's topics without an owner, time-weighted mean over each second", "partitions, 1 s mean"},
}

func isTimelineFigure(name string) bool {
	return slices.ContainsFunc(timelineFigures, func(f struct{ name, doc, unit string }) bool { return f.name == name })
}

func timelineFigureNames() []string {
	var out []string
	for _, f := range timelineFigures {
		out = append(out, f.name)
	}
	return out
}

// timelineOf steps one run's trace into (t seconds, value) points.
func timelineOf(sc *scenario.Scenario, res *harness.Result, fig string) (xs, ys []float64) {
	step := func(at float64, v float64) {
		if n := len(ys); n > 0 {
			if ys[n-1] == v {
				return
			}
			xs, ys = append(xs, at), append(ys, ys[n-1]) // the step's riser
		}
		xs, ys = append(xs, at), append(ys, v)
	}
	owners := map[protocol.TopicPartition]int{}
	held := map[string][]protocol.TopicPartition{}
	set := func(node string, ps []protocol.TopicPartition) {
		for _, p := range held[node] {
			if owners[p]--; owners[p] == 0 {
				delete(owners, p)
			}
		}
		held[node] = ps
		for _, p := range ps {
			owners[p]++
		}
	}
	total := 0 // the partitions of the topics some group subscribes to
	for _, t := range sc.Topics {
		if slices.ContainsFunc(sc.Groups, func(g scenario.Group) bool { return slices.Contains(g.Subscribe, t.Name) }) {
			total += t.Partitions
		}
	}
	if fig == "unowned_partitions" {
		step(0, float64(total))
	} else {
		step(0, 0)
	}
	for i := range res.Trace {
		e := &res.Trace[i]
		at := float64(e.At) / 1e9
		switch fig {
		case "generation":
			if e.Kind == protocol.EvGenerationComplete {
				step(at, float64(e.Gen))
			}
		case "owned_partitions", "unowned_partitions":
			switch e.Kind {
			case protocol.EvAssigned:
				set(e.Node, slices.Clone(e.Partitions))
			case protocol.EvRevoked:
				set(e.Node, slices.DeleteFunc(slices.Clone(held[e.Node]), func(p protocol.TopicPartition) bool { return slices.Contains(e.Partitions, p) }))
			case harness.EvProcess:
				if e.State != "started" {
					set(e.Node, nil)
				}
			default:
				continue
			}
			if fig == "unowned_partitions" {
				step(at, float64(total-len(owners)))
			} else {
				step(at, float64(len(owners)))
			}
		}
	}
	end := float64(res.Summary.SimulatedMs) / 1000
	if n := len(ys); n > 0 {
		xs, ys = append(xs, end), append(ys, ys[n-1])
	}
	if fig != "generation" {
		xs, ys = binMean(xs, ys, end, 1)
	}
	// From the run's first fault on (its x is 0), the part of the run
	// the experiment is about; the startup join is left out.
	if len(res.Summary.Groups) > 0 && res.Summary.Groups[0].FirstFaultMs >= 0 {
		t0 := float64(res.Summary.Groups[0].FirstFaultMs) / 1000
		var cx, cy []float64
		for i := range xs {
			if xs[i] >= t0 {
				if len(cx) == 0 && i > 0 {
					cx, cy = append(cx, 0), append(cy, ys[i-1])
				}
				cx, cy = append(cx, xs[i]-t0), append(cy, ys[i])
			}
		}
		return cx, cy
	}
	return xs, ys
}

// binMean turns a step series (xs ascending, each value holding until the
// next x) into its time-weighted mean over bins of width w, one point at
// each bin's middle.
func binMean(xs, ys []float64, end, w float64) (bx, by []float64) {
	j := 0
	for lo := 0.0; lo < end; lo += w {
		hi := min(lo+w, end)
		sum := 0.0
		for t := lo; t < hi; {
			for j+1 < len(xs) && xs[j+1] <= t {
				j++
			}
			next := hi
			if j+1 < len(xs) && xs[j+1] < hi {
				next = xs[j+1]
			}
			sum += ys[j] * (next - t)
			t = next
		}
		bx, by = append(bx, (lo+hi)/2), append(by, sum/(hi-lo))
	}
	return bx, by
}

// timelineFigure draws a timeline plot: every point's run of the plot's
// seed, one curve each, named by its swept values.
func (r *Results) timelineFigure(p *Plot, st report.Style) (report.Figure, error) {
	e := r.Exp
	doc, unit := "", ""
	for _, f := range timelineFigures {
		if f.name == p.Y {
			doc, unit = f.doc, f.unit
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
			xs, ys := timelineOf(sc, res, p.Y)
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
