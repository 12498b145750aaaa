package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() { register(newCompareCmd) }

type compareFlags struct {
	seeds, workers int
	out            string
	asJSON         bool
	all            bool
	aSets, bSets   *setFlags
}

func newCompareCmd(a *app) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "what does moving from A to B change? every figure on the same seeds, with paired differences",
		Long: `Run two configurations on the same seeds (1..N) and show, for each figure, A,
B, the paired difference B − A with its 95% interval (paired Student-t over
the seeds) and whether it is distinguishable from 0 (the interval excludes
0). A and B are scenario files or built-in names; or give one scenario and
--a-set/--b-set overrides ("what does moving session.timeout.ms from 10 s
to 45 s change?"). Runs are kept in DIR/a and DIR/b (resume); DIR/compare.png
draws the main figures side by side.

Examples:
  simrun compare crash-one-member graceful-leave --seeds 20
  simrun compare gc-pause --a-set 'groups[0].client.session.timeout.ms=10000' \
      --b-set 'groups[0].client.session.timeout.ms=20000'`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeScenarios(2),
	}
	fs := cmd.Flags()
	fs.IntVar(&f.seeds, "seeds", 20, "`N` paired seeds (1..N)")
	fs.IntVar(&f.workers, "workers", 0, "`K` parallel runs (default 0: one per CPU)")
	f.aSets = addSetFlagNamed(fs, "a-set", "override a setting of A only, `PATH=VALUE` (repeatable)")
	f.bSets = addSetFlagNamed(fs, "b-set", "override a setting of B only, `PATH=VALUE` (repeatable)")
	fs.StringVar(&f.out, "out", "", "output `DIR` for the runs and the plot (default "+OutRoot+"/compare-<A>-vs-<B>)")
	fs.BoolVar(&f.asJSON, "json", false, "print the comparison as JSON on stdout")
	fs.BoolVar(&f.all, "all", false, "show every figure, also those equal in every run")
	synopsis(cmd, "A [B]")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		tuneGC()
		return a.compare(args, &f)
	}
	return cmd
}

func (a *app) compare(args []string, f *compareFlags) error {
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	if f.seeds < 2 || f.seeds > experiments.MaxSeeds {
		return fail(exitBadInput, "simrun compare: --seeds %d: want 2..%d (a paired interval needs two seeds)", f.seeds, experiments.MaxSeeds)
	}
	pathA, pathB := args[0], args[0]
	if len(args) == 2 {
		pathB = args[1]
	} else if len(*f.aSets) == 0 && len(*f.bSets) == 0 {
		return fail(exitBadInput, "simrun compare: give two scenarios A B, or one scenario with --a-set/--b-set overrides")
	}
	side := func(path string, sets *setFlags, tag string) (experiments.CompareSide, string, error) {
		sc, source, data, err := loadScenario(path, sets)
		if err != nil {
			return experiments.CompareSide{}, "", fail(exitBadInput, "%s: %v", tag, err)
		}
		printNotes(a.stderr, sc)
		name := sc.Name
		if len(*sets) > 0 {
			var parts []string
			for _, o := range *sets {
				v, _ := json.Marshal(o.Value)
				parts = append(parts, lastKey(o.Path)+"="+strings.Trim(string(v), `"`))
			}
			name += " " + strings.Join(parts, " ")
		}
		return experiments.CompareSide{Name: name, Source: source, Data: data}, sc.Name, nil
	}
	sa, nameA, err := side(pathA, f.aSets, "A")
	if err != nil {
		return err
	}
	sb, nameB, err := side(pathB, f.bSets, "B")
	if err != nil {
		return err
	}
	if sa.Name == sb.Name {
		sa.Name, sb.Name = "A: "+sa.Name, "B: "+sb.Name
	}
	out := f.out
	if out == "" {
		out = filepath.Join(OutRoot, "compare-"+nameA+"-vs-"+nameB)
	}
	ctx, stop := a.interruptible()
	defer stop()
	a.running = "simrun compare " + strings.Join(args, " ")
	if err := a.lockOut(out); err != nil {
		return err
	}
	c, err := experiments.Compare(ctx, sa, sb, f.seeds, experiments.TuneOptions{Out: out, Workers: f.workers, Log: a.stderr})
	if err != nil {
		return sweepError(err)
	}
	plotPath, err := experiments.WriteComparePlot(c, out, f.all)
	if err != nil {
		return fail(exitBadInput, "simrun compare: %v", err)
	}
	if f.asJSON {
		rep := struct {
			A    string `json:"a"`
			B    string `json:"b"`
			Plot string `json:"plot"`
			*experiments.Comparison
		}{sa.Name, sb.Name, plotPath, c}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fail(exitBadInput, "simrun compare: writing JSON: %v", err)
		}
		return nil
	}
	printCompare(a.stdout, c, sa.Name, sb.Name, f.all)
	if plotPath != "" {
		fmt.Fprintf(a.stdout, "plot: %s (SVG beside it)\n", plotPath)
	}
	return nil
}

func lastKey(path string) string {
	if i := strings.LastIndex(path, "client."); i >= 0 {
		return path[i+len("client."):]
	}
	if i := strings.LastIndex(path, "]."); i >= 0 {
		return path[i+2:]
	}
	return path
}

func printCompare(w io.Writer, c *experiments.Comparison, a, b string, all bool) {
	fmt.Fprintf(w, "A = %s\nB = %s\n%d paired seeds; intervals 95%%; difference = B − A (paired t); * = distinguishable from 0\n\n", a, b, c.Seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tA\tB\tB − A\t")
	hidden := 0
	for _, fc := range c.Figures {
		if !all && fc.EqualInEveryRun() {
			hidden++
			continue
		}
		mark := ""
		if fc.Distinguishable {
			mark = "*"
		}
		est := func(v, lo, hi experiments.Num) string {
			return experiments.FormatEstimate(experiments.Estimate{Value: float64(v), Lo: float64(lo), Hi: float64(hi)})
		}
		diff := "no pairs"
		if fc.Pairs > 0 {
			diff = est(fc.Diff, fc.DiffLo, fc.DiffHi)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.FigureLabel(fc.Figure), est(fc.A, fc.ALo, fc.AHi), est(fc.B, fc.BLo, fc.BHi), diff, mark)
	}
	tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(w, "(%d figures equal in every run not shown; --all shows them)\n", hidden)
	}
	if c.LockStep {
		fmt.Fprintln(w, "warning: "+scenario.LockStepWarning)
	}
	if note := c.QuantisedRecovery(); note != "" {
		fmt.Fprintln(w, "note: "+note)
	}
}
