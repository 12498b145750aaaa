package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/rebalsim/rebalsim/harness"
)

func init() {
	register("explain", command{summary: "explain each eviction and coordinator-dead mark of one run", run: cmdExplain})
}

// cmdExplain runs the scenario with the trace kept and prints, for each
// eviction and each coordinator-dead mark, its causal chain
// (harness.Explain; docs/OBSERVABILITY.md).
func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "seed (default: the scenario's seed)")
	sets := addSetFlag(fs)
	member := fs.String("member", "", "only this member's evictions and dead marks (e.g. payments-3)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: simrun explain SCENARIO [--seed N] [--member M]")
		fs.PrintDefaults()
	}
	path, ok := scenarioArg(fs, args)
	if !ok {
		return exitBadInput
	}
	sc, _, _, err := loadScenario(path, sets)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitBadInput
	}
	if *member != "" {
		if _, _, ok := sc.ResolveMember(*member); !ok {
			fmt.Fprintf(stderr, "simrun explain: unknown member %q; members are named <group>-<index>\n", *member)
			return exitBadInput
		}
	}
	s := seedOr(fs, seed, sc.Seed)
	res, err := harness.Run(sc, s, harness.Options{KeepTrace: true})
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return exitBadInput
	}
	xs := harness.Explain(sc, res.Trace, *member)
	fmt.Fprintf(stdout, "scenario %s, seed %d: %d evictions and coordinator-dead marks", sc.Name, s, len(xs))
	if *member != "" {
		fmt.Fprintf(stdout, " of %s", *member)
	}
	fmt.Fprintln(stdout)
	for _, x := range xs {
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, x.String())
	}
	if len(res.Summary.InvariantViolations) > 0 {
		v := res.Summary.InvariantViolations[0]
		fmt.Fprintf(stderr, "invariant violated (%s) at %d ms, seed %d: %s\n", v.Checker, v.AtMs, s, v.Message)
		return exitViolation
	}
	return exitOK
}
