package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/atomicfile"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() { register(newShrinkCmd) }

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

func newShrinkCmd(a *app) *cobra.Command {
	var seed uint64
	var until, out string
	cmd := &cobra.Command{
		Use:   "shrink",
		Short: "reduce a run's faults to the few that still show a property (an invariant violation, an eviction, ...)",
		Long: `Write the run's fault timeline (swarm faults included) as explicit faults and
delta-debug it down to a 1-minimal set that still shows the property.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.Uint64Var(&seed, "seed", 0, "seed `N` (default: the scenario's seed)")
	sets := addSetFlag(fs)
	fs.StringVar(&until, "until", "violation", "the `PROPERTY` to keep: violation, evictions, false-evictions, dead-marks, false-dead-marks, unstable, or an oracle's name ("+strings.Join(scenario.OracleNames, ", ")+")")
	fs.StringVar(&out, "out", "", "write the reduced scenario to `FILE.yaml` (default: print it)")
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		path := args[0]
		stdout, stderr := a.stdout, a.stderr
		holds, ok := shrinkProperties[until]
		oracle := slices.Contains(scenario.OracleNames, until)
		if !ok && !oracle {
			known := append([]string{"violation", "evictions", "false-evictions", "dead-marks", "false-dead-marks", "unstable"}, scenario.OracleNames...)
			_, err := checkNames("--until", until, "property", known)
			if err == nil { // a comma: one property only
				err = fmt.Errorf("--until %s: one property only", quoteArg(until))
			}
			return fail(exitBadInput, "simrun shrink: %v", err)
		}
		sc, source, data, err := loadScenario(path, sets)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		printNotes(stderr, sc)
		s := seedOr(cmd, seed, sc.Seed)
		a.running = fmt.Sprintf("simrun shrink %s --seed %d --until %s%s", path, s, until, setsText(sets))
		var res *harness.ShrinkResult
		if oracle {
			// The candidate is judged by that one oracle (harness.RunOracles).
			var runErr error
			res, err = harness.ShrinkScenario(judgedBy(sc, []string{until}), s, func(c *scenario.Scenario) bool {
				_, fs, err := harness.RunOracles(c, s, harness.Options{})
				if err != nil {
					runErr = err
					return false
				}
				return slices.ContainsFunc(fs, func(f harness.Finding) bool { return f.Oracle == until })
			}, 0)
			if err == nil {
				err = runErr
			}
		} else {
			res, err = harness.Shrink(sc, s, holds, 0)
		}
		if err != nil {
			return fail(exitBadInput, "simrun shrink: %s --seed %d: %v", path, s, err)
		}
		reduced, err := scenario.WithFaults(source, data, res.Faults)
		if err != nil {
			return fail(exitBadInput, "simrun shrink: %v", err)
		}
		fmt.Fprintf(stderr, "shrink: %d faults -> %d that still show %q (%d runs)\n", res.From, len(res.Faults), until, res.Runs)
		for _, f := range res.Faults {
			fmt.Fprintf(stderr, "  %s\n", scenario.FormatFault(f))
		}
		if out == "" {
			stdout.Write(reduced)
			return nil
		}
		if err := atomicfile.WriteFile(out, reduced); err != nil {
			return fail(exitBadInput, "simrun shrink: %v", err)
		}
		if oracle {
			fmt.Fprintf(stderr, "wrote %s; reproduce with: simrun run %s --seed %d --fail-on %s\n", out, out, s, until)
		} else {
			fmt.Fprintf(stderr, "wrote %s; reproduce with: simrun run %s --seed %d\n", out, out, s)
		}
		return nil
	}
	return cmd
}
