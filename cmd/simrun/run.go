package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() {
	register("run", command{summary: "run one scenario (a file or a built-in name) for one seed", run: cmdRun})
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "seed (default: the scenario's seed)")
	asJSON := fs.Bool("json", false, "print the JSON summary on stdout")
	trace := fs.String("trace", "", "write the trace as JSON lines to `FILE.jsonl`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: simrun run SCENARIO [--seed N] [--json] [--trace FILE.jsonl]")
		fmt.Fprintln(stderr, "SCENARIO is a scenario file or a built-in name (simrun list).")
		fs.PrintDefaults()
	}
	path, rest := splitPositional(args)
	if err := fs.Parse(rest); err != nil {
		return exitBadInput
	}
	if path == "" && fs.NArg() > 0 {
		path = fs.Arg(0)
	}
	if path == "" {
		fs.Usage()
		return exitBadInput
	}
	sc, err := scenario.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitBadInput
	}
	s := sc.Seed
	seedSet := false
	fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
	if seedSet {
		s = *seed
	}
	opts := harness.Options{}
	var tf *os.File
	var tw *bufio.Writer
	if *trace != "" {
		tf, err = os.CreateTemp(filepath.Dir(*trace), ".trace-*")
		if err != nil {
			fmt.Fprintln(stderr, "simrun:", err)
			return exitBadInput
		}
		defer os.Remove(tf.Name())
		tw = bufio.NewWriterSize(tf, 1<<20)
		opts.TraceJSONL = tw
	}
	res, err := harness.Run(sc, s, opts)
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return exitBadInput
	}
	if tf != nil {
		if err := tw.Flush(); err == nil {
			err = tf.Close()
		}
		if err == nil {
			err = os.Rename(tf.Name(), *trace)
		}
		if err != nil {
			fmt.Fprintln(stderr, "simrun: writing trace:", err)
			return exitBadInput
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res.Summary)
	} else {
		printHuman(stdout, &res.Summary, path)
	}
	if len(res.Summary.InvariantViolations) > 0 {
		v := res.Summary.InvariantViolations[0]
		fmt.Fprintf(stderr, "invariant violated (%s) at %d ms: %s\nreproduce with: simrun run %s --seed %d\n",
			v.Checker, v.AtMs, v.Message, path, s)
		return exitViolation
	}
	return exitOK
}

// splitPositional lets the positional argument come before the flags
// ("simrun run crash-one-member --seed 3"), which the flag package does not.
func splitPositional(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

func printHuman(w io.Writer, s *harness.Summary, path string) {
	fmt.Fprintf(w, "scenario %s, seed %d: %.1f s simulated, %d trace events\n", s.Scenario, s.Seed, float64(s.SimulatedMs)/1000, s.Events)
	for _, g := range s.Groups {
		fmt.Fprintf(w, "\ngroup %s\n", g.ID)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  rebalances\t%d\t(duration p50 %.0f ms, p99 %.0f ms, max %.0f ms)\n", g.RebalanceCount, g.RebalanceDurationMs.P50, g.RebalanceDurationMs.P99, g.RebalanceDurationMs.Max)
		fmt.Fprintf(tw, "  coordinator-dead marks\t%d\t(%d false)\n", g.CoordinatorDeadMarks, g.FalseCoordinatorDeadMarks)
		fmt.Fprintf(tw, "  evictions\t%d\t(%d false)\n", g.Evictions, g.FalseEvictions)
		fmt.Fprintf(tw, "  unowned partition-seconds\t%.1f\t\n", g.UnownedPartitionSeconds)
		fmt.Fprintf(tw, "  double-owned partition-seconds\t%.1f\t\n", g.DoubleOwnedPartitionSeconds)
		fmt.Fprintf(tw, "  member-hours\t%.3f\t\n", g.MemberHours)
		fmt.Fprintf(tw, "  final generation\t%d\t(stable at end: %v)\n", g.FinalGeneration, g.StableAtEnd)
		for _, f := range g.FatalErrors {
			fmt.Fprintf(tw, "  fatal\t%s\t\n", f)
		}
		tw.Flush()
		if len(g.Rebalances) > 0 {
			fmt.Fprintln(w, "\n  timeline")
			for _, r := range g.Rebalances {
				fmt.Fprintf(w, "  %9.3f s → %9.3f s  rebalance to generation %d (%s), %d members, %d ms\n",
					float64(r.StartMs)/1000, float64(r.EndMs)/1000, r.Generation, r.Trigger, r.Members, r.DurationMs)
			}
		}
	}
	if len(s.InvariantViolations) == 0 {
		fmt.Fprintln(w, "\ninvariants: all held")
	} else {
		fmt.Fprintf(w, "\ninvariants: %d violated\n", len(s.InvariantViolations))
		for _, v := range s.InvariantViolations {
			fmt.Fprintf(w, "  %d ms %s: %s\n", v.AtMs, v.Checker, v.Message)
		}
	}
	fmt.Fprintf(w, "trace sha256 %s\n", s.TraceSHA256)
}
