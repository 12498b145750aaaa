package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() {
	register(newSweepCmd)
	builtinExperiments = experiments.BuiltinNames
}

// OutRoot is where sweep, tune and compare write when --out is not given:
// under the working directory, never inside a checkout's committed
// results/ unless asked (a sweep run in a checkout must not overwrite the
// committed figures). simrun report NAME writes
// results/NAME/, where the committed reports live (docs/EXPERIMENTS.md).
const OutRoot = "rebalsim-out"

// sweepFlags are shared by sweep and report.
type sweepFlags struct {
	root    string // the default output root: OutRoot, or results for report
	out     string
	workers int
	shard   string
	sets    *setFlags
	maxRuns int64
}

func (f *sweepFlags) register(fs *pflag.FlagSet, shard bool) {
	f.root = OutRoot
	if !shard { // report
		f.root = "results"
	}
	fs.StringVar(&f.out, "out", "", "output `DIR` (default "+f.root+"/<experiment name>)")
	fs.IntVar(&f.workers, "workers", 0, "`K` parallel runs (default 0: one per CPU)")
	if shard {
		fs.StringVar(&f.shard, "shard", "", "run only shard `i/n` of the points (0 <= i < n); join with simrun merge")
	}
	f.sets = addSetFlagNamed(fs, "set", "override a setting of the experiment's base scenario, `PATH=VALUE` (repeatable); swept values still apply on top")
	fs.Int64Var(&f.maxRuns, "max-runs", experiments.DefaultMaxRuns, "refuse a sweep of more than `N` runs (points × seeds)")
}

// sweepGCPercent is the garbage collector's target while a sweep runs: each
// run allocates a fresh world in many small pieces, and with the default
// (100) the collector's work on one core stalls the run on the other; 400
// brings the 1→2 worker speed-up of 1,000 short runs from 1.7× to 1.9× for
// a few times more heap. GOGC in the environment wins.
const sweepGCPercent = 400

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(sweepGCPercent)
	}
}

func newSweepCmd(a *app) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "run an experiment (a file or a built-in name) over its grid and seeds",
		Long: `Run an experiment over its grid and seeds and write DIR/points.csv,
DIR/points_long.csv (one row per point, seed and figure), DIR/summary.csv,
DIR/effective_config.jsonl and the plots. EXPERIMENT is an experiment file or
a built-in name (simrun list). Finished points are kept in DIR/.points;
running again resumes.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNames(experiments.BuiltinNames, 1),
	}
	f.register(cmd.Flags(), true)
	synopsis(cmd, "EXPERIMENT")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		tuneGC()
		_, _, err := a.loadAndSweep(&f, args[0])
		return err
	}
	return cmd
}

// loadAndSweep loads the experiment and sweeps it. It returns the
// experiment when the sweep is complete (nil after a shard), and the
// directory.
func (a *app) loadAndSweep(f *sweepFlags, path string) (*experiments.Experiment, string, error) {
	stdout, stderr := a.stdout, a.stderr
	if err := checkWorkers(f.workers); err != nil {
		return nil, "", err
	}
	e, err := experiments.Load(path)
	if err != nil {
		return nil, "", fail(exitBadInput, "%v", err)
	}
	if f.sets != nil && len(*f.sets) > 0 {
		if e, err = e.WithOverrides(*f.sets); err != nil {
			return nil, "", fail(exitBadInput, "%s: --set: %v", path, err)
		}
	}
	opts := experiments.Options{Out: f.out, Workers: f.workers, Log: stderr, MaxRuns: f.maxRuns}
	if opts.Out == "" {
		opts.Out = filepath.Join(f.root, e.Name)
	}
	if f.shard != "" {
		if opts.Shard, err = experiments.ParseShard(f.shard); err != nil {
			return nil, "", fail(exitBadInput, "simrun: %v", err)
		}
	}
	if sf, ok := osFile(stderr); ok {
		opts.Progress = stderr
		opts.ProgressTTY = term.IsTerminal(int(sf.Fd()))
	}
	if err := a.lockOut(opts.Out); err != nil {
		return nil, "", err
	}
	ctx, stop := a.interruptible()
	defer stop()
	a.running = "simrun sweep " + path
	out, err := experiments.Sweep(ctx, e, opts)
	if err != nil {
		return nil, "", sweepError(err)
	}
	fmt.Fprintf(stdout, "%s: %d points × %d seeds; %d points resumed, %d runs now\n", e.Name, out.Points, e.Seeds, out.Skipped, out.Ran)
	if !out.Complete {
		fmt.Fprintf(stdout, "shard %s done; %d points belong to other shards: simrun merge DIR... --out DIR\n", f.shard, out.Missing)
		return nil, opts.Out, nil
	}
	fmt.Fprintf(stdout, "wrote %s/points.csv, points_long.csv, summary.csv and %d plots\n", opts.Out, len(e.Plots))
	return e, opts.Out, nil
}

// sweepError maps a sweep's error to an exit status: an interrupt (any of
// interruptSignals) is 130 with one message whatever the signal.
func sweepError(err error) error {
	var pe *experiments.PanicError
	if errors.As(err, &pe) {
		return fail(exitInternal, "simrun: internal error: %v\nThis is a bug in simrun; please report it with the command, the scenario and this message (it names the point and seed).\n%s", pe, pe.Stack)
	}
	if errors.Is(err, context.Canceled) {
		return fail(exitInterrupted, "simrun: interrupted: %v", err)
	}
	return fail(exitBadInput, "simrun: %v", err)
}
