package experiments

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/rebalsim/rebalsim/experiments/report"
	"github.com/rebalsim/rebalsim/internal/outdir"
	"github.com/rebalsim/rebalsim/scenario"
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
	// traced are the traced runs timeline plots draw (timelines.go).
	tmu    sync.Mutex
	traced map[[2]int]*tracedRun
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
		for f := range figs {
			st[f] = summarize(f, r.Runs[i])
		}
		r.Stats = append(r.Stats, st)
	}
	return r, nil
}

// Warnings are what a reader of the results must know before quoting
// them: points with invalid runs, points whose group was not Stable at the
// end of some run, and points whose seeds all gave the same figures (their
// interval says nothing about the spread of real deployments).
func (r *Results) Warnings() []string {
	var out []string
	if r.Exp.LockStep() {
		out = append(out, scenario.LockStepWarning)
	}
	vi, si := figureIndex("valid"), figureIndex("stable_at_end")
	for i, pt := range r.Points {
		invalid, unstable := 0, 0
		for _, run := range r.Runs[i] {
			if run[vi] != 1 {
				invalid++
			}
			if run[si] != 1 {
				unstable++
			}
		}
		label := fmt.Sprintf("%s (%s)", pt.ID, r.Exp.Label(pt))
		if invalid > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d runs INVALID (fatal error, never Stable, or cut short): its figures do not measure the configuration", label, invalid, len(r.Runs[i])))
		} else if unstable > 0 {
			out = append(out, fmt.Sprintf("%s: the group was not Stable at the end of %d of %d runs", label, unstable, len(r.Runs[i])))
		}
		if len(r.Runs[i]) >= 2 && identicalRuns(r.Runs[i]) {
			out = append(out, fmt.Sprintf("%s: all %d seeds gave identical figures: the seed varies nothing here, and its interval says nothing (is timing: exact set?)", label, len(r.Runs[i])))
		}
	}
	for i := range r.Exp.Plots {
		p := &r.Exp.Plots[i]
		if fig, err := r.figure(p); err == nil {
			for _, pr := range report.Problems(fig) {
				out = append(out, fmt.Sprintf("plot %s: %s", p.File, pr))
			}
		}
	}
	return out
}

// trusted reports whether every run of point i is valid and ended Stable:
// only such points may be named lowest or highest in a report.
func (r *Results) trusted(i int) bool {
	vi, si := figureIndex("valid"), figureIndex("stable_at_end")
	for _, run := range r.Runs[i] {
		if run[vi] != 1 || run[si] != 1 {
			return false
		}
	}
	return true
}

func identicalRuns(runs [][]float64) bool {
	skip := figureIndex("events") // the cost, not a figure of the system
	for _, run := range runs[1:] {
		for f, v := range run {
			if f == skip {
				continue
			}
			w := runs[0][f]
			if v != w && !(math.IsNaN(v) && math.IsNaN(w)) {
				return false
			}
		}
	}
	return true
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
	if err := e.canonicalSums(dir); err != nil {
		return err
	}
	if err := outdir.WriteFile(dir, filepath.Join(dir, "points.csv"), r.pointsCSV()); err != nil {
		return err
	}
	if err := outdir.WriteFile(dir, filepath.Join(dir, "summary.csv"), r.summaryCSV()); err != nil {
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
					err = outdir.WriteFile(dir, filepath.Join(dir, e.Plots[i].File+"."+format), b)
				}
				errs[i*len(formats)+j] = err
			}(i, j, format)
		}
	}
	wg.Wait()
	// A plot that cannot be drawn fails the same way in every format: say
	// it once, not once per format.
	var uniq []error
	seen := map[string]bool{}
	for _, err := range errs {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			uniq = append(uniq, err)
		}
	}
	return errors.Join(uniq...)
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
	h = append(h, "seeds", "valid_fraction")
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
		cells = append(cells, fmt.Sprint(e.Seeds), fmtSummary(r.Stats[i][figureIndex("valid")].Mean))
		for _, st := range r.Stats[i] {
			for _, v := range statValues(st) {
				cells = append(cells, fmtSummary(v))
			}
		}
		b.WriteString(csvLine(cells) + "\n")
	}
	return []byte(b.String())
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
