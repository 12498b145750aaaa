package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/explore"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() { register(newExploreCmd) }

// isFinding reports whether a scenario file is one explore wrote for a
// finding (its header's first line).
func isFinding(data []byte) bool {
	return strings.HasPrefix(string(data), "# simrun explore finding ")
}

// newExploreCmd is `simrun explore` (docs/INTERFACE.md): a thin entry point
// over explore.Run. Exit 1 when the campaign found anything, 0 when not,
// 2 on bad input.
func newExploreCmd(a *app) *cobra.Command {
	var (
		seeds, workers, shrinks   int
		first                     uint64
		out, swarm, only, without string
		with                      string
		fileFaults, stopFirst     bool
		budget                    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "explore",
		Short: "run a scenario over many seeds with random faults; shrink, deduplicate and write every oracle finding",
		Long: `Run the scenario over seeds with random faults (its own swarm:, or --swarm default: a
generic fault mix drawn from each seed), judge every run with the oracles (` + strings.Join(scenario.OracleNames, ", ") + `)
and the invariant checkers, shrink each finding and write DIR/<signature>/{scenario.yaml,explain.txt,timeline.png}.
Results do not depend on --workers; rerun with the same --out to resume.
Exit status: 1 when anything was found, 0 when not, 2 on bad input (the table below).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.IntVar(&seeds, "seeds", 100, "number of seeds `N` to run")
	fs.Uint64Var(&first, "first-seed", 1, "the first seed `S` (seeds S … S+N-1)")
	fs.IntVar(&workers, "workers", 0, "parallel runs `K` (0: one per CPU; results do not depend on it)")
	fs.StringVar(&out, "out", "", "write findings and the resumable index to `DIR`")
	fs.DurationVar(&budget, "time", 0, "stop after this much wall `TIME` (e.g. 10m; 0: no limit); rerun with the same --out to resume")
	fs.StringVar(&swarm, "swarm", "", "`default`: draw the generic fault mix from each seed; none: the file's own faults on every seed (a finding's scenario: the default); else the scenario's own swarm: and faults:")
	fs.BoolVar(&fileFaults, "file-faults", true, "with --swarm default, keep the scenario's own faults: too (add-partitions entries are always kept: they are the topics' history)")
	fs.StringVar(&without, "without", "", "leave these `KINDS` out of the generic mix (comma-separated: "+strings.Join(explore.GenericKinds(), ", ")+")")
	fs.StringVar(&with, "with", "", "add these opt-in `KINDS` to the generic mix (comma-separated: "+strings.Join(explore.OptInKinds(), ", ")+
		"; api-filter: one member's requests of one group API dropped for a window)")
	fs.IntVar(&shrinks, "shrinks-per-oracle", 3, "findings shrunk per oracle `N`; later ones are counted, not shrunk")
	fs.StringVar(&only, "oracle", "", "only report these `ORACLES` or checkers (comma-separated, e.g. unowned-at-end,group-stuck)")
	fs.BoolVar(&stopFirst, "stop-at-first", false, "stop at the first run with a finding, without shrinking it (seeds to the first finding)")
	sets := addSetFlag(fs)
	maxMemory := addMaxMemory(fs)
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		path := args[0]
		stdout, stderr := a.stdout, a.stderr
		if err := checkWorkers(workers); err != nil {
			return err
		}
		if workers == 0 {
			workers = runtime.NumCPU()
		}
		if swarm != "" && swarm != explore.SwarmDefault && swarm != explore.SwarmNone {
			return fail(exitBadInput, "simrun explore: --swarm %s: want %q (the generic mix drawn from each seed) or %q (the file's own faults on every seed)",
				quoteArg(swarm), explore.SwarmDefault, explore.SwarmNone)
		}
		// The lists are checked before anything runs.
		withoutList, err := checkNames("--without", without, "fault kind", explore.GenericKinds())
		if err != nil {
			return fail(exitBadInput, "simrun explore: %v", err)
		}
		withList, err := checkNames("--with", with, "opt-in fault kind", explore.OptInKinds())
		if err != nil {
			return fail(exitBadInput, "simrun explore: %v", err)
		}
		onlyList, err := checkNames("--oracle", only, "oracle or checker", slices.Concat(scenario.OracleNames, harness.CheckerNames, []string{explore.OraclePanic}))
		if err != nil {
			return fail(exitBadInput, "simrun explore: %v", err)
		}
		sc, source, data, err := loadScenario(path, sets)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		if err := harness.CheckMemory(sc, harness.Options{MaxMemory: int64(*maxMemory)}); err != nil {
			return fail(exitBadInput, "simrun explore: %v", err)
		}
		if swarm == "" && sc.Swarm == nil {
			if !isFinding(data) {
				return fail(exitBadInput, "simrun explore: %s has no swarm: block, so every seed would run the same faults; use --swarm default "+
					"(a generic mix drawn from each seed) or --swarm none (its own faults only, e.g. to re-judge one seed)", path)
			}
			// A finding's own scenario: its faults are the finding's.
			swarm = explore.SwarmNone
			fmt.Fprintf(stderr, "explore: %s is an explore finding: judging its own faults (--swarm none)\n", path)
		}
		if swarm == explore.SwarmDefault {
			if need, why := explore.FitDuration(sc); need > 0 {
				// Extend the run instead of refusing it; the finding files
				// carry the longer duration (it is one more --set).
				fmt.Fprintf(stderr, "explore: duration extended from %s to %s: %s\n", durfmt.Human(sc.Duration), durfmt.Human(need), why)
				*sets = append(*sets, scenario.Override{Path: "duration", Value: need.String()})
				if sc, source, data, err = loadScenario(path, sets); err != nil {
					return fail(exitBadInput, "%v", err)
				}
			}
		}
		var setStrs []string
		for _, s := range *sets {
			setStrs = append(setStrs, fmt.Sprintf("%s=%v", s.Path, s.Value))
		}
		cfg := explore.Config{
			Scenario: sc, Source: source, Data: data, Command: "simrun run", Sets: setStrs,
			Swarm: swarm, FileFaults: fileFaults || swarm == "", FirstSeed: first, Seeds: seeds, Workers: workers,
			Without: withoutList, Only: onlyList, MaxMemory: int64(*maxMemory),
			Out: out, Budget: budget, ShrinksPerOracle: shrinks, Progress: stderr, StopAtFirst: stopFirst,
			Artifacts: func(dir string, sc *scenario.Scenario, seed uint64, res *harness.Result) error {
				return writeTimeline(filepath.Join(dir, "timeline.png"), sc, res)
			},
		}
		cfg.With = withList
		a.running = fmt.Sprintf("simrun explore %s --seeds %d --first-seed %d%s", path, seeds, first, setsText(sets))
		if out != "" {
			if err := a.lockOut(out); err != nil {
				return err
			}
		}
		ctx, stop := a.interruptible()
		defer stop()
		cfg.Ctx = ctx
		rep, err := explore.Run(cfg)
		if errors.Is(err, context.Canceled) {
			if out != "" {
				return fail(exitInterrupted, "simrun explore: interrupted; the seeds judged so far are in %s: rerun the same command to resume", filepath.Join(out, explore.IndexFile))
			}
			return fail(exitInterrupted, "simrun explore: interrupted (nothing kept: no --out)")
		}
		if err != nil {
			return fail(exitBadInput, "simrun explore: %v", err)
		}
		fmt.Fprintf(stdout, "explore %s: %d runs (seeds %d-%d, stopped: %s) in %s, %d with findings, %d distinct\n",
			sc.Name, rep.Runs, rep.FirstSeed, rep.NextSeed-1, rep.Stopped, durfmt.Human(rep.Wall), rep.RunsWithFindings, len(rep.Findings))
		if rep.FirstFindingSeed > 0 {
			fmt.Fprintf(stdout, "first finding: seed %d (%d runs, %s)\n", rep.FirstFindingSeed, rep.FirstFindingSeed-rep.FirstSeed+1, durfmt.Human(rep.FirstFindingWall))
		}
		for _, f := range rep.Findings {
			fmt.Fprintf(stdout, "FINDING %s: seed %d, %d runs, %d of %d faults kept: %s\n", f.Signature, f.Seed, f.Runs, len(f.Faults), f.FromFault, f.Message)
			if f.Class.Text != "" {
				fmt.Fprintf(stdout, "  %s\n", f.Class.Text)
			}
			if f.Repro != "" {
				fmt.Fprintf(stdout, "  reproduce: %s\n", f.Repro)
			} else {
				fmt.Fprintf(stdout, "  reproduce: rerun with --out DIR to write its scenario file and reproduce line\n")
			}
		}
		for _, o := range append(scenario.OracleNames, explore.OraclePanic) {
			if n := rep.Unshrunk[o]; n > 0 {
				fmt.Fprintf(stdout, "  + %d more runs fired %s after its shrink budget (--shrinks-per-oracle)\n", n, o)
			}
		}
		if rep.RunsWithFindings > 0 {
			return status(exitViolation)
		}
		return nil
	}
	return cmd
}
