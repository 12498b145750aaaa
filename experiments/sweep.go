package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/outdir"
	"github.com/rebalsim/rebalsim/scenario"
)

// Runner runs one scenario for one seed. It must be a pure function of its
// arguments (harness.Run is) and safe to call from several goroutines on
// different scenarios.
type Runner func(sc *scenario.Scenario, seed uint64) (*harness.Summary, error)

// HarnessRunner runs the real harness with no trace output.
func HarnessRunner(sc *scenario.Scenario, seed uint64) (*harness.Summary, error) {
	res, err := harness.Run(sc, seed, harness.Options{})
	if err != nil {
		return nil, err
	}
	return &res.Summary, nil
}

// Shard selects the points one machine runs: point i belongs to shard
// i mod Count. The zero value (Count 0) and Count 1 mean all points.
type Shard struct {
	Index, Count int
}

// ParseShard reads "i/n" with 0 <= i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n (e.g. 0/4)", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) owns(pt Point) bool {
	return s.Count <= 1 || pt.Index%s.Count == s.Index
}

// Options control one sweep.
type Options struct {
	Out     string // output directory (required)
	Workers int    // parallel runs; 0 means runtime.GOMAXPROCS(0)
	Shard   Shard
	// Runner runs one (scenario, seed); nil means HarnessRunner. Tests
	// inject a fake.
	Runner Runner
	// Progress receives progress reports (nil: none). ProgressTTY selects
	// the in-place bar (a terminal) over one line per 10%.
	Progress    io.Writer
	ProgressTTY bool
	// Now is the wall clock for the progress rate and ETA only (nil:
	// time.Now). Nothing written to files depends on it.
	Now func() time.Time
	// Log receives warnings such as invariant violations (nil: none).
	Log io.Writer
	// MaxRuns bounds points × seeds (0: DefaultMaxRuns); simrun sweep
	// --max-runs raises it.
	MaxRuns int64
}

// DefaultMaxRuns is the default bound on the runs of one sweep (points ×
// seeds): a million short runs take hours on a laptop.
const DefaultMaxRuns = 1_000_000

// Outcome says what a sweep did.
type Outcome struct {
	Points   int  // points owned by this shard
	Skipped  int  // of those, already finished (resumed)
	Ran      int  // runs executed now
	Complete bool // every point of the experiment is finished and the result files were written
	Missing  int  // points of the experiment not finished (other shards)
	// Plots are the PNG files written (SVG beside each), when Complete.
	Plots []string
}

type job struct {
	pt   Point
	seed uint64
}

type result struct {
	pt      Point
	seed    uint64
	row     string
	viol    string
	invalid string // the run's invalid_reason, when it is invalid
	err     error
}

// Sweep runs every unfinished (point, seed) of the experiment that belongs
// to the shard, writes each finished point to DIR/.points/ atomically, and,
// when every point of the experiment is finished, writes the result files
// (Finalize). A cancelled context stops dispatching new runs; finished
// points are kept, so running the sweep again resumes.
func Sweep(ctx context.Context, e *Experiment, opts Options) (*Outcome, error) {
	if opts.Out == "" {
		return nil, errors.New("experiments: no output directory")
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	run := opts.Runner
	if run == nil {
		run = HarnessRunner
	}
	maxRuns := opts.MaxRuns
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	if runs := int64(e.NumPoints()) * int64(e.Seeds); runs > maxRuns {
		return nil, fmt.Errorf("%s: %d points × %d seeds = %d runs, more than the limit of %d runs; raise it with --max-runs %d if you mean it",
			e.Source, e.NumPoints(), e.Seeds, runs, maxRuns, runs)
	}
	if err := checkOwner(e, opts.Out); err != nil {
		return nil, err
	}
	if err := e.checkForeign(opts.Out); err != nil {
		return nil, err
	}
	if err := outdir.MkdirAll(opts.Out, filepath.Join(opts.Out, pointsDir)); err != nil {
		return nil, err
	}
	if err := writeSweepMeta(e, opts.Out); err != nil {
		return nil, err
	}
	out := &Outcome{}
	sums, haveSums := loadSums(opts.Out)
	var todo []Point
	for _, pt := range e.Points() {
		if !opts.Shard.owns(pt) {
			continue
		}
		out.Points++
		if _, ok := e.readPoint(opts.Out, pt); ok {
			if pointTrusted(opts.Out, pt, sums, haveSums) {
				out.Skipped++
				continue
			}
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "warning: %s does not match its checksum in %s (edited or damaged): running point %s again\n",
					pointPath(opts.Out, pt), filepath.Join(opts.Out, sweepDir, sumsFile), pt.ID)
			}
		}
		todo = append(todo, pt)
	}
	total := len(todo) * e.Seeds
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := false
	prog := newProgress(opts, total)
	if total > 0 {
		workers = min(workers, total)
		jobs := make(chan job)
		results := make(chan result, workers)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					results <- e.runOne(run, j)
				}
			}()
		}
		go func() {
			defer close(jobs)
			for _, pt := range todo {
				for s := 1; s <= e.Seeds; s++ {
					select {
					case jobs <- job{pt, uint64(s)}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
		go func() { wg.Wait(); close(results) }()

		pending := map[int][]string{}
		warned := map[int]bool{} // points with an invalid run already named
		var firstErr error
		for r := range results {
			if r.err != nil {
				if firstErr == nil {
					firstErr = r.err
					cancel() // stop dispatching; drain what is in flight
				}
				continue
			}
			out.Ran++
			prog.step()
			if r.viol != "" && opts.Log != nil {
				fmt.Fprintf(opts.Log, "%s %s (%s) seed %d: %s\n", e.Name, r.pt.ID, e.Label(r.pt), r.seed, r.viol)
			}
			if r.invalid != "" && opts.Log != nil && !warned[r.pt.Index] {
				warned[r.pt.Index] = true
				fmt.Fprintf(opts.Log, "warning: %s %s (%s) seed %d is INVALID: %s (its figures measure a broken run)\n", e.Name, r.pt.ID, e.Label(r.pt), r.seed, r.invalid)
			}
			rows := pending[r.pt.Index]
			if rows == nil {
				rows = make([]string, e.Seeds)
			}
			rows[r.seed-1] = r.row
			pending[r.pt.Index] = rows
			if done(rows) {
				// Written even after another run failed: a finished point
				// is never thrown away.
				data := e.pointFile(r.pt, rows)
				err := outdir.WriteFile(opts.Out, pointPath(opts.Out, r.pt), data)
				if err == nil {
					err = appendSum(opts.Out, r.pt.ID, data)
				}
				if err != nil && firstErr == nil {
					firstErr = err
				}
				delete(pending, r.pt.Index)
			}
		}
		interrupted = ctx.Err() != nil
		prog.finish()
		if firstErr != nil {
			return out, firstErr
		}
		if interrupted {
			return out, fmt.Errorf("sweep interrupted (finished points are kept in %s; run again to resume): %w",
				filepath.Join(opts.Out, pointsDir), context.Canceled)
		}
	}
	for _, pt := range e.Points() {
		if _, ok := e.readPoint(opts.Out, pt); !ok {
			out.Missing++
		}
	}
	if out.Missing == 0 {
		if err := Finalize(e, opts.Out); err != nil {
			return out, err
		}
		out.Complete = true
		if opts.Log != nil {
			if res, err := LoadResults(e, opts.Out); err == nil {
				for _, w := range res.Warnings() {
					fmt.Fprintln(opts.Log, "warning:", w)
				}
			}
		}
		for _, p := range e.Plots {
			out.Plots = append(out.Plots, filepath.Join(opts.Out, p.File+".png"))
		}
		// Tell a new user which file to open (simrun sweep/report pass
		// stderr as Log).
		if opts.Log != nil {
			for _, p := range out.Plots {
				fmt.Fprintf(opts.Log, "plot: %s (SVG beside it)\n", p)
			}
		}
	}
	return out, nil
}

func done(rows []string) bool {
	for _, r := range rows {
		if r == "" {
			return false
		}
	}
	return true
}

// runOne parses the point's scenario afresh (each run gets its own world,
// nothing shared between goroutines) and runs one seed.
func (e *Experiment) runOne(run Runner, j job) (r result) {
	r = result{pt: j.pt, seed: j.seed}
	defer func() {
		if p := recover(); p != nil {
			r.err = &PanicError{Where: fmt.Sprintf("%s %s (%s) seed %d", e.Name, j.pt.ID, e.Label(j.pt), j.seed), Value: p, Stack: debug.Stack()}
		}
	}()
	sc, err := e.Scenario(j.pt)
	if err != nil {
		r.err = fmt.Errorf("%s %s (%s): %w", e.Name, j.pt.ID, e.Label(j.pt), err)
		return r
	}
	s, err := run(sc, j.seed)
	if err != nil {
		r.err = fmt.Errorf("%s %s (%s) seed %d: %w", e.Name, j.pt.ID, e.Label(j.pt), j.seed, err)
		return r
	}
	if len(s.InvariantViolations) > 0 {
		v := s.InvariantViolations[0]
		r.viol = fmt.Sprintf("invariant violated (%s) at %d ms: %s", v.Checker, v.AtMs, v.Message)
	}
	if !s.Valid {
		r.invalid = s.InvalidReason
	}
	r.row = e.row(j.pt, j.seed, figures(sc, s), s.TraceSHA256)
	return r
}

// PanicError is a run that panicked: a bug in the simulator, not bad
// input. simrun reports it as an internal error (exit 3) naming the point
// and seed.
type PanicError struct {
	Where string // experiment, point, label and seed
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("%s: panic: %v", p.Where, p.Value) }
