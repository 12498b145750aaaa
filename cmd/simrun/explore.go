package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/explore"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/internal/durfmt"
	"github.com/rebalsim/rebalsim/scenario"
)

func init() { register(newExploreCmd) }

// newExploreCmd is `simrun explore` (docs/INTERFACE.md): a thin entry point
// over explore.Run. Exit 1 when the campaign found anything, 0 when not,
// 2 on bad input.
func newExploreCmd(a *app) *cobra.Command {
	var (
		seeds, workers, shrinks   int
		first                     uint64
		out, swarm, only, without string
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
	fs.StringVar(&swarm, "swarm", "", "`default`: draw the generic fault mix from each seed (else the scenario's own swarm: and faults:)")
	fs.BoolVar(&fileFaults, "file-faults", true, "with --swarm default, keep the scenario's own faults: too (add-partitions entries are always kept: they are the topics' history)")
	fs.StringVar(&without, "without", "", "leave these `KINDS` out of the generic mix (comma-separated: "+strings.Join(explore.GenericKinds(), ", ")+")")
	fs.IntVar(&shrinks, "shrinks-per-oracle", 3, "findings shrunk per oracle `N`; later ones are counted, not shrunk")
	fs.StringVar(&only, "oracle", "", "only report these `ORACLES` or checkers (comma-separated, e.g. unowned-at-end,group-stuck)")
	fs.BoolVar(&stopFirst, "stop-at-first", false, "stop at the first run with a finding, without shrinking it (seeds to the first finding)")
	sets := addSetFlag(fs)
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
		if swarm != "" && swarm != explore.SwarmDefault {
			return fail(exitBadInput, "simrun explore: --swarm %q: the only generic mix is %q", swarm, explore.SwarmDefault)
		}
		sc, source, data, err := loadScenario(path, sets)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		if swarm == "" && sc.Swarm == nil {
			return fail(exitBadInput, "simrun explore: %s has no swarm: block, so every seed would run the same faults; use --swarm default", path)
		}
		var setStrs []string
		for _, s := range *sets {
			setStrs = append(setStrs, fmt.Sprintf("%s=%v", s.Path, s.Value))
		}
		cfg := explore.Config{
			Scenario: sc, Source: source, Data: data, Command: "simrun run", Sets: setStrs,
			Swarm: swarm, FileFaults: fileFaults || swarm == "", FirstSeed: first, Seeds: seeds, Workers: workers,
			Out: out, Budget: budget, ShrinksPerOracle: shrinks, Progress: stderr, StopAtFirst: stopFirst,
			Artifacts: func(dir string, sc *scenario.Scenario, seed uint64, res *harness.Result) error {
				return writeTimeline(filepath.Join(dir, "timeline.png"), sc, res)
			},
		}
		if without != "" {
			cfg.Without = strings.Split(without, ",")
		}
		if only != "" {
			cfg.Only = strings.Split(only, ",")
		}
		a.running = fmt.Sprintf("simrun explore %s --seeds %d --first-seed %d%s", path, seeds, first, setsText(sets))
		rep, err := explore.Run(cfg)
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
			if f.Repro != "" {
				fmt.Fprintf(stdout, "  reproduce: %s\n", f.Repro)
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
