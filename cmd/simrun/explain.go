package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/harness/tracing"
)

func init() { register(newExplainCmd) }

// newExplainCmd runs the scenario with the trace kept and prints, for each
// eviction and each coordinator-dead mark, its causal chain
// (tracing.Explain; docs/OBSERVABILITY.md).
func newExplainCmd(a *app) *cobra.Command {
	var seed uint64
	var member string
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "explain each eviction and coordinator-dead mark of one run",
		Long: `Run one scenario for one seed and print, for each eviction and each
coordinator-dead mark, why it happened: the last heartbeat that arrived, the
ones lost, the pauses, the timer that fired.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.Uint64Var(&seed, "seed", 0, "seed `N` (default: the scenario's seed)")
	sets := addSetFlag(fs)
	fs.StringVar(&member, "member", "", "only this `MEMBER`'s evictions and dead marks (e.g. payments-3)")
	oracleSpec := addOraclesFlag(fs)
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		path := args[0]
		stdout, stderr := a.stdout, a.stderr
		sc, _, _, err := loadScenario(path, sets)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		printNotes(stderr, sc)
		if member != "" {
			if err := sc.CheckMember(member); err != nil {
				return fail(exitBadInput, "simrun explain: %v", err)
			}
		}
		oracles, err := resolveOracles(*oracleSpec, sc, nil)
		if err != nil {
			return fail(exitBadInput, "simrun explain: %v", err)
		}
		s := seedOr(cmd, seed, sc.Seed)
		a.running = fmt.Sprintf("simrun explain %s --seed %d%s", path, s, setsText(sets))
		var res *harness.Result
		var vs []oracleVerdict
		if len(oracles) > 0 {
			var fs []harness.Finding
			res, fs, err = harness.RunOracles(judgedBy(sc, oracles), s, harness.Options{KeepTrace: true})
			vs = verdicts(oracles, fs)
		} else {
			res, err = harness.Run(sc, s, harness.Options{KeepTrace: true})
		}
		if err != nil {
			return fail(exitBadInput, "simrun: %v", err)
		}
		// The oracles' verdicts come first: they say what to look for below.
		printVerdicts(stdout, vs)
		xs := tracing.Explain(sc, res.Trace, res.Observations, member)
		fmt.Fprintf(stdout, "scenario %s, seed %d: %d evictions and coordinator-dead marks", sc.Name, s, len(xs))
		if member != "" {
			fmt.Fprintf(stdout, " of %s", member)
		}
		fmt.Fprintln(stdout)
		for _, x := range xs {
			fmt.Fprintln(stdout)
			fmt.Fprint(stdout, x.String())
		}
		if len(res.Summary.InvariantViolations) > 0 {
			v := res.Summary.InvariantViolations[0]
			return fail(exitViolation, "invariant violated (%s) at %d ms, seed %d: %s", v.Checker, v.AtMs, s, v.Message)
		}
		return nil
	}
	return cmd
}
