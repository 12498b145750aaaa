package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/realkafka"
)

func init() { register(newRealCmd) }

func newRealCmd(a *app) *cobra.Command {
	var (
		kafka, out, cache     string
		reps, only            int
		asJSON, drop, keepRaw bool
		reconvert             []string
		cleanup               bool
	)
	cmd := &cobra.Command{
		Use:   "real",
		Short: "run a scenario on a real Kafka broker and real Java consumers (needs root, Java 17, Maven)",
		Long: `Run SCENARIO on a real KRaft cluster (a controller and the scenario's
brokers) with one Java consumer per member, each host in its own network
namespace, the faults made by signals and nftables on the wall clock; then
convert the broker, client and driver logs into the summary of
'simrun run --json'. Needs root, Java 17, Maven, iproute2 and nftables; the
jars come from Maven Central into --cache. Each repetition writes its raw
logs to OUT/rep-NNN, packs the lines the converter reads into
logs.tar.gz and removes the raw logs (--keep-raw keeps them); a finished
repetition is skipped when the command is run again (resumable). Each
repetition draws its own workload seed and fault phases from (scenario,
broker version, repetition). --reconvert DIR… converts finished
repetitions again (after a converter fix) and rewrites their summary.json.
See docs/REAL.md.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(reconvert) > 0 || cleanup {
				return cobra.ArbitraryArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.StringVar(&kafka, "kafka", "", "broker `VERSION` (e.g. 4.3.1; default: from coordinator.profile)")
	fs.IntVar(&reps, "reps", 1, "`N` repetitions, one directory each")
	fs.StringVar(&out, "out", "", "output `DIR` (default real-runs/SCENARIO-KAFKAVERSION)")
	fs.StringVar(&cache, "cache", "", "jar cache `DIR` (default $REBALSIM_CACHE or ~/.cache/rebalsim)")
	fs.BoolVar(&asJSON, "json", false, "print the JSON summary (one object; an array with --reps > 1) on stdout")
	fs.BoolVar(&drop, "drop-unsupported", false, "run without the faults and settings the testbed cannot make (the summary lists them)")
	fs.IntVar(&only, "rep", 0, "run only repetition `K` (its seed and fault phases are repetition K's)")
	fs.BoolVar(&keepRaw, "keep-raw", false, "keep the raw logs beside logs.tar.gz")
	fs.BoolVar(&cleanup, "cleanup", false, "only remove what an interrupted run left (its JVMs, namespaces, bridge) and exit")
	fs.StringSliceVar(&reconvert, "reconvert", nil, "convert the finished repetition `DIR`s again and rewrite their summary.json (no run)")
	sets := addSetFlag(fs)
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(reconvert) > 0 {
			return a.reconvert(append(reconvert, args...))
		}
		if cleanup {
			unlock, err := realkafka.Lock()
			if err != nil {
				return fail(exitBadInput, "simrun real --cleanup: %v", err)
			}
			defer unlock()
			if still := realkafka.Cleanup(); len(still) > 0 {
				return fail(exitBadInput, "simrun real --cleanup: could not remove %s", strings.Join(still, ", "))
			}
			return nil
		}
		if reps < 1 {
			return fail(exitBadInput, "simrun real: --reps must be at least 1 (got %d)", reps)
		}
		sc, _, _, err := loadScenario(args[0], sets)
		if err != nil {
			return fail(exitBadInput, "%v", err)
		}
		plan, err := realkafka.NewPlan(sc, kafka, drop)
		if err != nil {
			return fail(exitBadInput, "simrun real %s: %v", args[0], err)
		}
		if out == "" {
			out = filepath.Join("real-runs", sc.Name+"-"+plan.BrokerVersion)
		}
		if cache == "" {
			cache = realkafka.DefaultCache()
		}
		a.running = "simrun real " + args[0]
		first := 1
		if only > 0 {
			first, reps = only, only
		}
		return a.real(plan, out, cache, first, reps, asJSON, keepRaw)
	}
	return cmd
}

func (a *app) real(plan *realkafka.Plan, out, cache string, first, reps int, asJSON, keepRaw bool) error {
	stderr := a.stderr
	if err := realkafka.CheckTools(); err != nil {
		return fail(exitBadInput, "simrun real: %v", err)
	}
	for _, d := range plan.Dropped {
		fmt.Fprintf(stderr, "dropped: %s\n", d)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	unlock, err := realkafka.Lock()
	if err != nil {
		return fail(exitBadInput, "simrun real: %v", err)
	}
	defer unlock()
	if left := realkafka.Leftovers(); len(left) > 0 {
		fmt.Fprintf(stderr, "cleaning up a previous run's leftovers: %s\n", strings.Join(left, ", "))
		if still := realkafka.Cleanup(); len(still) > 0 {
			return fail(exitBadInput, "simrun real: cannot remove leftovers of an earlier run (%s); remove them by hand (ip netns delete …, ip link delete %s)", strings.Join(still, ", "), realkafka.Bridge)
		}
	}
	jars := &realkafka.Jars{Cache: cache, Progress: stderr}
	ctx, stop := a.interruptible()
	defer stop()
	var results []*realkafka.Result
	for i := first; i <= reps; i++ {
		dir := filepath.Join(out, fmt.Sprintf("rep-%03d", i))
		if realkafka.Done(dir) {
			fmt.Fprintf(stderr, "repetition %d/%d: already done in %s\n", i, reps, dir)
		} else {
			fmt.Fprintf(stderr, "repetition %d/%d into %s (loadavg %s)\n", i, reps, dir, loadavg())
		}
		res, _, err := realkafka.Repetition(ctx, realkafka.RepetitionSpec{Plan: plan, Dir: dir, Jars: jars, Progress: stderr, Rep: i, KeepRaw: keepRaw})
		if errors.Is(err, realkafka.ErrInterrupted) {
			fmt.Fprintln(stderr, err)
			return status(exitInterrupted)
		}
		if err != nil {
			return fail(exitBadInput, "simrun real: %v", err)
		}
		results = append(results, res)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		var v any = results
		if len(results) == 1 {
			v = results[0]
		}
		if err := enc.Encode(v); err != nil {
			return fail(exitBadInput, "simrun: writing JSON: %v", err)
		}
	} else {
		printRealTable(a.stdout, results)
	}
	for _, r := range results {
		if !r.Valid {
			fmt.Fprintf(stderr, "warning: repetition in %s is INVALID as a measurement: %s\n", r.Real.Dir, r.InvalidReason)
		}
	}
	return nil
}

// reconvert converts finished repetitions again (simrun real --reconvert).
func (a *app) reconvert(dirs []string) error {
	for _, d := range dirs {
		res, err := realkafka.Reconvert(d)
		if err != nil {
			return fail(exitBadInput, "simrun real --reconvert: %v", err)
		}
		fmt.Fprintf(a.stderr, "reconverted %s (valid: %v)\n", d, res.Valid)
	}
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// printRealTable prints each repetition's main figures per group.
func printRealTable(w io.Writer, rs []*realkafka.Result) {
	fmt.Fprintf(w, "%-4s %-10s %10s %12s %9s %7s %10s %10s %8s %9s\n", "rep", "group", "rebalances", "mean_dur_ms", "evictions", "leaves", "unowned_ps", "after_flt", "moved", "wall_s")
	for i, r := range rs {
		for _, g := range r.Groups {
			fmt.Fprintf(w, "%-4d %-10s %10d %12.0f %9d %7d %10.1f %10.1f %8d %9.0f\n", i+1, g.ID, g.RebalanceCount, g.RebalanceDurationMs.Mean,
				g.Evictions, g.Leaves, g.UnownedPartitionSeconds, g.UnownedPartitionSecondsAfterFirstFault, g.PartitionsMoved, float64(r.Real.WallMs)/1000)
		}
	}
}
