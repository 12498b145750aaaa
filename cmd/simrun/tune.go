package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/experiments"
)

func init() { register(newTuneCmd) }

type tuneFlags struct {
	params, requires, shows []string
	minimize                bool
	maximize                bool
	seeds, grid             int
	workers                 int
	out                     string
	asJSON                  bool
	sets                    *setFlags
}

func newTuneCmd(a *app) *cobra.Command {
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "find the smallest (or largest) setting that meets your requirements, with its evidence",
		Long: `Answer "which setting?": search a scenario setting over a range for the
smallest (--minimize, the default) or largest (--maximize) value whose runs
meet every --require, and show the evidence.

A requirement holds only when its 95% interval holds on the unsafe side: the
upper bound for <= and <, the lower bound for >= and >. So "0 false
evictions in 3 member-hours" does not pass false_evictions_per_member_hour
<= 0.01. Intervals fit the figure: Garwood (exact Poisson) for counts and
per-member-hour rates, Wilson for stable_at_end, order statistics for
FIGURE.p95 over seeds, Student-t for other means. A value whose runs never
formed a group or were not stable at the end, or that the scenario rejects,
fails every requirement.

The search is deterministic: a coarse grid (--grid values), then, when
pass/fail and every required figure are monotone on the grid, bisection of
the bracket down to the range's step; otherwise the grid's best value. Each
value is a one-point sweep in DIR/values/COLUMN=VALUE (workers, resume: a
value tried before, by any range or grid, is read back, not run again).

Example:
  simrun tune gc-pause --param 'groups[0].client.session.timeout.ms=6000..30000' \
      --require 'false_evictions <= 0.1' --seeds 40`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.params, "param", nil, "the setting to tune, `PATH=LO..HI[:STEP]` (repeatable: several make a small grid), e.g. groups[0].client.session.timeout.ms=6000..60000 or faults[0].for=1s..20s:500ms")
	fs.StringArrayVar(&f.requires, "require", nil, "a requirement `'FIGURE[.STAT] OP BOUND'` (repeatable), e.g. 'false_evictions_per_member_hour <= 0.01' or 'recovery_ms.p95 <= 30000'")
	fs.StringArrayVar(&f.shows, "show", nil, "a `FIGURE[.STAT]` to draw beside the requirements against the parameter, a cost (repeatable), e.g. recovery_ms: with two requirements or one and a --show, tune draws the trade-off on one figure (tradeoff.png)")
	fs.BoolVar(&f.minimize, "minimize", false, "recommend the smallest passing value (the default)")
	fs.BoolVar(&f.maximize, "maximize", false, "recommend the largest passing value")
	fs.IntVar(&f.seeds, "seeds", 20, "`N` seeds (1..N) per value")
	fs.IntVar(&f.grid, "grid", 7, "`G` values in the coarse grid of each parameter")
	fs.IntVar(&f.workers, "workers", 0, "`K` parallel runs (default 0: one per CPU)")
	f.sets = addSetFlag(fs)
	fs.StringVar(&f.out, "out", "", "output `DIR` for the runs of each value, tune.csv and the plots (default "+OutRoot+"/tune-<scenario>)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON on stdout (recommended, the table, the reproduce command)")
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		tuneGC()
		return a.tune(args[0], &f)
	}
	return cmd
}

func (a *app) tune(path string, f *tuneFlags) error {
	if f.minimize && f.maximize {
		return fail(exitBadInput, "simrun tune: --minimize and --maximize exclude each other")
	}
	if len(f.params) == 0 || len(f.requires) == 0 {
		return fail(exitBadInput, "simrun tune: want at least one --param PATH=LO..HI and one --require 'FIGURE OP BOUND'")
	}
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	if f.seeds < 1 || f.seeds > experiments.MaxSeeds {
		return fail(exitBadInput, "simrun tune: --seeds %d: want 1..%d", f.seeds, experiments.MaxSeeds)
	}
	if f.grid < 2 || f.grid > 50 {
		return fail(exitBadInput, "simrun tune: --grid %d: want 2..50", f.grid)
	}
	if len(f.params) > 3 {
		return fail(exitBadInput, "simrun tune: at most 3 --param (the grid is their product)")
	}
	sc, source, data, err := loadScenario(path, f.sets)
	if err != nil {
		return fail(exitBadInput, "%v", err)
	}
	printNotes(a.stderr, sc)
	spec := &experiments.TuneSpec{ScenarioSource: source, ScenarioData: data, Maximize: f.maximize, Seeds: f.seeds, Grid: f.grid}
	for _, p := range f.params {
		tp, err := experiments.ParseTuneParam(p)
		if err != nil {
			return fail(exitBadInput, "simrun tune: %v", err)
		}
		spec.Params = append(spec.Params, tp)
	}
	for _, r := range f.requires {
		req, err := experiments.ParseRequirement(r)
		if err != nil {
			return fail(exitBadInput, "simrun tune: %v", err)
		}
		spec.Requirements = append(spec.Requirements, req)
	}
	for _, s := range f.shows {
		req, err := experiments.ParseRequirement(s + " <= 0")
		if err != nil {
			return fail(exitBadInput, "simrun tune: --show %s: %v", s, strings.TrimSuffix(err.Error(), " <= 0"))
		}
		req.Text, req.Op, req.Bound = s, "", math.NaN()
		spec.Show = append(spec.Show, req)
	}
	out := f.out
	if out == "" {
		out = filepath.Join(OutRoot, "tune-"+sc.Name)
	}
	ctx, stop := a.interruptible()
	defer stop()
	a.running = tuneCommand(path, f)
	if err := a.lockOut(out); err != nil {
		return err
	}
	res, err := experiments.Tune(ctx, spec, experiments.TuneOptions{Out: out, Workers: f.workers, Log: a.stderr})
	if err != nil {
		return sweepError(err)
	}
	plots, err := experiments.WriteTuneFiles(res, out)
	if err != nil {
		return fail(exitBadInput, "simrun tune: %v", err)
	}
	rep := tuneReport(path, f, res, plots, filepath.Join(out, "tune.csv"))
	if f.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fail(exitBadInput, "simrun tune: writing JSON: %v", err)
		}
	} else {
		printTune(a.stdout, res, rep)
	}
	if res.Recommended < 0 {
		return status(exitViolation)
	}
	return nil
}

// tuneCommand is the command line that reproduces a tune.
func tuneCommand(path string, f *tuneFlags) string {
	var b strings.Builder
	b.WriteString("simrun tune " + shellQuote(path))
	for _, p := range f.params {
		b.WriteString(" --param " + shellQuote(p))
	}
	for _, r := range f.requires {
		b.WriteString(" --require " + shellQuote(r))
	}
	for _, s := range f.shows {
		b.WriteString(" --show " + shellQuote(s))
	}
	if f.maximize {
		b.WriteString(" --maximize")
	}
	b.WriteString(" --seeds " + strconv.Itoa(f.seeds))
	if f.grid != 7 {
		b.WriteString(" --grid " + strconv.Itoa(f.grid))
	}
	b.WriteString(setsText(f.sets))
	return b.String()
}

// tuneJSON is `simrun tune --json`.
type tuneJSON struct {
	Scenario     string                    `json:"scenario"`
	Params       []experiments.TuneParam   `json:"params"`
	Requirements []experiments.Requirement `json:"requirements"`
	Direction    string                    `json:"direction"`
	Seeds        int                       `json:"seeds"`
	Method       string                    `json:"method"`
	// Recommended maps each tuned path to its value; null when no value
	// meets every requirement (exit status 1).
	Recommended map[string]float64 `json:"recommended"`
	RangeEdge   bool               `json:"range_edge"`
	// NeighbourFails says why the tried value next to the answer, on the
	// unsafe side, fails.
	Neighbour      map[string]float64 `json:"neighbour,omitempty"`
	NeighbourFails []string           `json:"neighbour_fails,omitempty"`
	// Closest, when nothing passes, names the requirement that failed
	// closest and where.
	Closest         string              `json:"closest,omitempty"`
	Tried           []experiments.Trial `json:"tried"`
	Plots           []string            `json:"plots"`
	CSV             string              `json:"csv"`
	Reproduce       string              `json:"reproduce"`
	ReproduceRun    string              `json:"reproduce_decisive_run,omitempty"`
	EffectiveConfig *experiments.Config `json:"effective_config"`
}

func tuneReport(path string, f *tuneFlags, res *experiments.TuneResult, plots []string, csvPath string) *tuneJSON {
	spec := res.Spec
	rep := &tuneJSON{Scenario: path, Params: spec.Params, Requirements: spec.Requirements, Direction: "minimize",
		Seeds: spec.Seeds, Method: res.Method, RangeEdge: res.Edge, Tried: res.Trials, Plots: plots, CSV: csvPath,
		Reproduce: tuneCommand(path, f)}
	if spec.Maximize {
		rep.Direction = "maximize"
	}
	values := func(t experiments.Trial) map[string]float64 {
		m := map[string]float64{}
		for i, p := range spec.Params {
			m[p.Path] = t.Values[i]
		}
		return m
	}
	if res.Recommended >= 0 {
		t := res.Trials[res.Recommended]
		rep.Recommended = values(t)
		cfg := t.Config
		rep.EffectiveConfig = &cfg
	}
	if res.Neighbour >= 0 {
		t := res.Trials[res.Neighbour]
		rep.Neighbour = values(t)
		decisive := -1
		if t.Invalid != "" {
			rep.NeighbourFails = append(rep.NeighbourFails, "invalid: "+t.Invalid)
		}
		for q, c := range t.Checks {
			if !c.Pass {
				rep.NeighbourFails = append(rep.NeighbourFails, checkText(spec.Requirements[q], c))
				if decisive < 0 {
					decisive = q
				}
			}
		}
		if decisive >= 0 && t.Invalid == "" {
			rep.ReproduceRun = runCommand(path, f, spec, t, res.DecisiveSeed(t, decisive))
		}
	}
	if res.Recommended < 0 {
		if ti, q := res.Closest(); ti >= 0 && q >= 0 {
			t := res.Trials[ti]
			var fails []string
			for q2, c := range t.Checks {
				if !c.Pass {
					fails = append(fails, spec.Requirements[q2].Text)
				}
			}
			rep.Closest = fmt.Sprintf("%s fails %s; closest: %s", res.Label(t), strings.Join(fails, " and "), checkText(spec.Requirements[q], t.Checks[q]))
			rep.ReproduceRun = runCommand(path, f, spec, t, res.DecisiveSeed(t, q))
		} else {
			rep.Closest = "every value tried is invalid (see the table)"
		}
	}
	return rep
}

// runCommand is `simrun run` of one trial's decisive seed.
func runCommand(path string, f *tuneFlags, spec *experiments.TuneSpec, t experiments.Trial, seed int) string {
	var b strings.Builder
	b.WriteString("simrun run " + shellQuote(path) + setsText(f.sets))
	for i, p := range spec.Params {
		b.WriteString(" --set " + shellQuote(p.Path+"="+p.ValueText(t.Values[i])))
	}
	fmt.Fprintf(&b, " --seed %d", seed)
	return b.String()
}

// checkText explains one check: "false_evictions <= 0.1: upper bound 0.28
// > 0.1 (mean 0.1, 2 events in 20 runs, Garwood)".
func checkText(req experiments.Requirement, c experiments.Check) string {
	e := c.Est
	if c.Runs == 0 {
		return req.Text + ": no run has a value"
	}
	side, b := "upper bound", e.Hi
	if req.Op[0] == '>' {
		side, b = "lower bound", e.Lo
	}
	verdict := "holds"
	if !c.Pass {
		verdict = "fails"
	}
	detail := fmt.Sprintf("estimate %s over %d runs", experiments.FormatShort(e.Value), e.N)
	switch e.Kind {
	case experiments.KindCount:
		detail = fmt.Sprintf("%s events in %d runs", experiments.FormatShort(e.Events), e.N)
	case experiments.KindRate:
		detail = fmt.Sprintf("%s events in %s member-hours", experiments.FormatShort(e.Events), experiments.FormatShort(e.Exposure))
	}
	s := fmt.Sprintf("%s %s: %s %s vs %s (%s, %s)", req.Text, verdict, side, experiments.FormatShort(b), experiments.FormatShort(req.Bound), detail, e.Kind)
	if c.Missing > 0 {
		s += fmt.Sprintf("; %d runs without a value", c.Missing)
	}
	// An order-statistic bound the sample is too small to give.
	if e.Kind == experiments.KindQuantile && math.IsInf(b, 0) {
		if q, ok := map[string]float64{"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}[req.Stat]; ok {
			s += fmt.Sprintf("; %d runs cannot bound a %s at 95%%: it needs at least %.0f (--seeds)", e.N, req.Stat, math.Ceil(math.Log(0.025)/math.Log(q)))
		}
	}
	// No event at all, yet the bound fails: only more runs can show it.
	if !c.Pass && e.Events == 0 && req.Op[0] == '<' && req.Bound > 0 && (e.Kind == experiments.KindCount || e.Kind == experiments.KindRate) {
		_, hi0 := experiments.Garwood(0)
		need := math.Ceil(hi0 / req.Bound) // runs, for a count per run
		if e.Kind == experiments.KindRate && e.Exposure > 0 {
			need = math.Ceil(hi0 / req.Bound / (e.Exposure / float64(e.N)))
		}
		s += fmt.Sprintf("; no event in any run: 0 events pass only with at least %.0f runs (--seeds)", need)
	}
	return s
}

func printTune(w io.Writer, res *experiments.TuneResult, rep *tuneJSON) {
	spec := res.Spec
	var ranges []string
	for _, p := range spec.Params {
		if p.Lo == p.Hi {
			ranges = append(ranges, fmt.Sprintf("%s at %s (one value)", p.Path, experiments.FormatNumber(p.Lo)))
			continue
		}
		ranges = append(ranges, fmt.Sprintf("%s in %s..%s (step %s)", p.Path, experiments.FormatNumber(p.Lo), experiments.FormatNumber(p.Hi), experiments.FormatNumber(p.Step)))
	}
	fmt.Fprintf(w, "tune %s: %s, %s, %d seeds per value\n", rep.Scenario, strings.Join(ranges, ", "), rep.Direction, spec.Seeds)
	fmt.Fprintf(w, "search: %s; %s tried\n\n", res.Method, plural(len(res.Trials), "value"))
	if res.Recommended >= 0 {
		fmt.Fprintf(w, "recommended: %s\n", res.Label(res.Trials[res.Recommended]))
		if res.Edge {
			fmt.Fprintln(w, "  (the end of the range: a value beyond it may pass too; widen --param to find the boundary)")
		}
	} else {
		fmt.Fprintf(w, "no value in the range meets every requirement\n  %s\n", rep.Closest)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var h []string
	for _, p := range spec.Params {
		h = append(h, p.Column)
	}
	for _, r := range spec.Requirements {
		h = append(h, r.Text+" [95% interval]")
	}
	h = append(h, "result")
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	for i, t := range res.Trials {
		var cells []string
		for _, v := range t.Values {
			cells = append(cells, strconv.FormatFloat(v, 'f', -1, 64))
		}
		for _, c := range t.Checks {
			mark := "ok"
			if !c.Pass {
				mark = "FAIL"
			}
			if t.Invalid != "" && c.Runs == 0 {
				cells = append(cells, "—  FAIL")
				continue
			}
			cells = append(cells, experiments.FormatEstimate(c.Est)+"  "+mark)
		}
		result := "fail"
		if t.Pass {
			result = "pass"
		}
		if t.Invalid != "" {
			result = "invalid: " + t.Invalid
		}
		if i == res.Recommended {
			result += "  <- recommended"
		}
		cells = append(cells, result)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if res.Neighbour >= 0 {
		fmt.Fprintf(w, "\nwhy not %s:\n", res.Label(res.Trials[res.Neighbour]))
		for _, s := range rep.NeighbourFails {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if note := res.QuantisedRecovery(); note != "" {
		fmt.Fprintln(w, "\nnote: "+note)
	}
	fmt.Fprintln(w)
	for _, p := range rep.Plots {
		fmt.Fprintf(w, "plot: %s (SVG beside it)\n", p)
	}
	fmt.Fprintf(w, "table: %s\n", rep.CSV)
	fmt.Fprintf(w, "reproduce: %s\n", rep.Reproduce)
	if rep.ReproduceRun != "" {
		fmt.Fprintf(w, "decisive run: %s  (simrun explain with the same arguments says why)\n", rep.ReproduceRun)
	}
}
