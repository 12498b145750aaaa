package main

import (
	"flag"
	"fmt"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"io"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() {
	register("shrink", command{summary: "reduce a run's faults to the few that still show a property (an invariant violation, an eviction, ...)", run: cmdShrink})
}

// shrinkProperties are what `simrun shrink --until` can look for.
var shrinkProperties = map[string]func(*harness.Summary) bool{
	"violation": func(s *harness.Summary) bool { return len(s.InvariantViolations) > 0 },
	"evictions": func(s *harness.Summary) bool {
		return sumGroups(s, func(g *harness.GroupSummary) int { return g.Evictions }) > 0
	},
	"false-evictions": func(s *harness.Summary) bool {
		return sumGroups(s, func(g *harness.GroupSummary) int { return g.FalseEvictions }) > 0
	},
	"dead-marks": func(s *harness.Summary) bool {
		return sumGroups(s, func(g *harness.GroupSummary) int { return g.CoordinatorDeadMarks }) > 0
	},
	"false-dead-marks": func(s *harness.Summary) bool {
		return sumGroups(s, func(g *harness.GroupSummary) int { return g.FalseCoordinatorDeadMarks }) > 0
	},
	"unstable": func(s *harness.Summary) bool {
		return sumGroups(s, func(g *harness.GroupSummary) int {
			if g.StableAtEnd {
				return 0
			}
			return 1
		}) > 0
	},
}

func sumGroups(s *harness.Summary, f func(*harness.GroupSummary) int) int {
	n := 0
	for i := range s.Groups {
		n += f(&s.Groups[i])
	}
	return n
}

func cmdShrink(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "seed (default: the scenario's seed)")
	sets := addSetFlag(fs)
	until := fs.String("until", "violation", "the property to keep: violation, evictions, false-evictions, dead-marks, false-dead-marks, unstable")
	out := fs.String("out", "", "write the reduced scenario to `FILE.yaml` (default: print it)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: simrun shrink SCENARIO [--seed N] [--until PROPERTY] [--out FILE.yaml]")
		fmt.Fprintln(stderr, "Writes the run's fault timeline (swarm faults included) as explicit faults and")
		fmt.Fprintln(stderr, "delta-debugs it down to a 1-minimal set that still shows the property.")
		fs.PrintDefaults()
	}
	path, ok := scenarioArg(fs, args)
	if !ok {
		return exitBadInput
	}
	holds, ok := shrinkProperties[*until]
	if !ok {
		fmt.Fprintf(stderr, "simrun shrink: unknown property %q\n", *until)
		fs.Usage()
		return exitBadInput
	}
	sc, source, data, err := loadScenario(path, sets)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitBadInput
	}
	s := seedOr(fs, seed, sc.Seed)
	res, err := harness.Shrink(sc, s, holds, 0)
	if err != nil {
		fmt.Fprintf(stderr, "simrun shrink: %s --seed %d: %v\n", path, s, err)
		return exitBadInput
	}
	reduced, err := scenario.WithFaults(source, data, res.Faults)
	if err != nil {
		fmt.Fprintln(stderr, "simrun shrink:", err)
		return exitBadInput
	}
	fmt.Fprintf(stderr, "shrink: %d faults -> %d that still show %q (%d runs)\n", res.From, len(res.Faults), *until, res.Runs)
	for _, f := range res.Faults {
		fmt.Fprintf(stderr, "  %s\n", scenario.FormatFault(f))
	}
	if *out == "" {
		stdout.Write(reduced)
		return exitOK
	}
	if err := atomicfile.WriteFile(*out, reduced); err != nil {
		fmt.Fprintln(stderr, "simrun shrink:", err)
		return exitBadInput
	}
	fmt.Fprintf(stderr, "wrote %s; reproduce with: simrun run %s --seed %d\n", *out, *out, s)
	return exitOK
}
