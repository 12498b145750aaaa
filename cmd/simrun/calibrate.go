package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/calibrate"
	"github.com/rebalsim/rebalsim/realkafka"
)

func init() { register(newCalibrateCmd) }

func newCalibrateCmd(a *app) *cobra.Command {
	var (
		kafka, out, cache string
		reps, seeds       int
		reportOnly        bool
	)
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "run a suite on the simulator and on real Kafka and report how close they are",
		Long: `Run every scenario of SUITE (a directory of scenario files; default: the
built-in suite) on real Kafka (--reps repetitions per broker version, each
through simrun real's code, into OUT/real/SCENARIO/kafka-V/rep-NNN) and on
the simulator (--seeds seeds per real repetition, each matched to it: the
measured latency, member starts and fault instants), then judge every
figure by the tolerance rule and write OUT/REPORT.md, calibration.csv,
values.csv and plots/. Repetitions are made rep-major and never twice (a
finished one has a done marker): run the command again to resume. Ctrl-C
writes the report of what finished and exits 130. --report-only runs
nothing real (no root, Java or Maven needed). See docs/CALIBRATE.md.`,
		Args: cobra.MaximumNArgs(1),
	}
	fs := cmd.Flags()
	fs.StringVar(&kafka, "kafka", "3.9,4.4", "broker `VERSIONS`, comma-separated (a line such as 4.4 runs its latest release)")
	fs.IntVar(&reps, "reps", 5, "`N` real repetitions per scenario and version")
	fs.IntVar(&seeds, "seeds", 3, "`N` simulated seeds per real repetition")
	fs.StringVar(&out, "out", filepath.Join("results", "calibration"), "output `DIR`")
	fs.StringVar(&cache, "cache", "", "jar cache `DIR` (default $REBALSIM_CACHE or ~/.cache/rebalsim)")
	fs.BoolVar(&reportOnly, "report-only", false, "make no real repetition: report from those under OUT")
	synopsis(cmd, "[SUITE]")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if reps < 1 || seeds < 1 {
			return fail(exitBadInput, "simrun calibrate: --reps and --seeds must be at least 1")
		}
		dir := ""
		if len(args) == 1 {
			dir = args[0]
		}
		suite, err := calibrate.LoadSuite(dir)
		if err != nil {
			return fail(exitBadInput, "simrun calibrate: %v", err)
		}
		var versions []string
		for _, v := range strings.Split(kafka, ",") {
			bv, err := calibrate.BrokerVersion(strings.TrimSpace(v))
			if err != nil {
				return fail(exitBadInput, "simrun calibrate: --kafka %s: %v", v, err)
			}
			versions = append(versions, bv)
		}
		o := calibrate.Options{Suite: suite, Versions: versions, Reps: reps, Seeds: seeds, Out: out, Progress: a.stderr}
		a.running = "simrun calibrate"
		ctx := context.Background()
		if !reportOnly {
			if err := realkafka.CheckTools(); err != nil {
				return fail(exitBadInput, "simrun calibrate: %v (--report-only reports without running real Kafka)", err)
			}
			unlock, err := realkafka.Lock()
			if err != nil {
				return fail(exitBadInput, "simrun calibrate: %v", err)
			}
			defer unlock()
			if left := realkafka.Leftovers(); len(left) > 0 {
				if still := realkafka.Cleanup(); len(still) > 0 {
					return fail(exitBadInput, "simrun calibrate: cannot remove leftovers of an earlier run (%s)", strings.Join(still, ", "))
				}
			}
			if cache == "" {
				cache = realkafka.DefaultCache()
			}
			o.Run = realRepetition(&realkafka.Jars{Cache: cache, Progress: a.stderr}, a)
			var stop context.CancelFunc
			ctx, stop = a.interruptible()
			defer stop()
		}
		res, err := calibrate.Calibrate(ctx, o)
		if errors.Is(err, calibrate.ErrInterrupted) {
			printTallies(a, res, out)
			return status(exitInterrupted)
		}
		var failed *calibrate.FailedError
		if errors.As(err, &failed) {
			printTallies(a, res, out)
			return fail(exitBadInput, "simrun calibrate: %v", err)
		}
		if err != nil {
			return fail(exitBadInput, "simrun calibrate: %v", err)
		}
		printTallies(a, res, out)
		return nil
	}
	return cmd
}

// realRepetition is calibrate's RepFunc: realkafka.Repetition, the one
// code path of a real repetition (simrun real's): the plan's per-repetition
// seeds and fault phases, the run, the converter, summary.json, the packed
// log lines and the done marker.
func realRepetition(jars *realkafka.Jars, a *app) calibrate.RepFunc {
	return func(ctx context.Context, plan *realkafka.Plan, dir string, rep int) error {
		_, _, err := realkafka.Repetition(ctx, realkafka.RepetitionSpec{Plan: plan, Dir: dir, Jars: jars, Progress: a.stderr, Rep: rep})
		return err
	}
}

func printTallies(a *app, res *calibrate.Result, out string) {
	if res == nil {
		return
	}
	t := res.Tallies("")
	for c, x := range t {
		fmt.Fprintf(a.stdout, "%-12s %3d agree, %3d disagree explained, %3d disagree UNEXPLAINED, %3d pending (so far %d agree, %d disagree)\n",
			calibrate.Class(c).String()+":", x.Agree, x.Explained, x.Unexplained, x.Pending, x.SoFarAgree, x.SoFarDisagree)
	}
	fmt.Fprintf(a.stdout, "report: %s\n", filepath.Join(out, "REPORT.md"))
}
