package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rebalsim/rebalsim/realkafka"
)

func init() { register(newRealCmd) }

func newRealCmd(a *app) *cobra.Command {
	var (
		kafka, out, cache string
		reps              int
		asJSON, drop      bool
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
logs to OUT/rep-NNN; a finished repetition is skipped when the command is
run again (resumable). See docs/REAL.md.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios(1),
	}
	fs := cmd.Flags()
	fs.StringVar(&kafka, "kafka", "", "broker `VERSION` (e.g. 4.3.1; default: from coordinator.profile)")
	fs.IntVar(&reps, "reps", 1, "`N` repetitions, one directory each")
	fs.StringVar(&out, "out", "", "output `DIR` (default real-runs/SCENARIO-KAFKAVERSION)")
	fs.StringVar(&cache, "cache", "", "jar cache `DIR` (default $REBALSIM_CACHE or ~/.cache/rebalsim)")
	fs.BoolVar(&asJSON, "json", false, "print the JSON summary (one object; an array with --reps > 1) on stdout")
	fs.BoolVar(&drop, "drop-unsupported", false, "run without the faults and settings the testbed cannot make (the summary lists them)")
	sets := addSetFlag(fs)
	synopsis(cmd, "SCENARIO")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
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
		return a.real(plan, out, cache, reps, asJSON)
	}
	return cmd
}

func (a *app) real(plan *realkafka.Plan, out, cache string, reps int, asJSON bool) error {
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
	for i := 1; i <= reps; i++ {
		dir := filepath.Join(out, fmt.Sprintf("rep-%03d", i))
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			res, err := realkafka.Convert(dir)
			if err != nil {
				return fail(exitBadInput, "simrun real: %v", err)
			}
			fmt.Fprintf(stderr, "repetition %d/%d: already done in %s\n", i, reps, dir)
			results = append(results, res)
			continue
		}
		_ = os.RemoveAll(dir) // an unfinished repetition starts over
		fmt.Fprintf(stderr, "repetition %d/%d into %s (loadavg %s)\n", i, reps, dir, loadavg())
		r := &realkafka.Runner{Plan: plan, Dir: dir, Jars: jars, Progress: stderr}
		if err := r.Prepare(); err != nil {
			return fail(exitBadInput, "simrun real: %v", err)
		}
		t := time.Now()
		err := r.Run(ctx)
		_ = os.RemoveAll(filepath.Join(dir, "data")) // the brokers' log.dirs: large, not needed by the converter
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted: cleaned up; the unfinished repetition will start over")
			return status(exitInterrupted)
		}
		if err != nil {
			return fail(exitBadInput, "simrun real: repetition %d: %v", i, err)
		}
		res, err := realkafka.Convert(dir)
		if err != nil {
			return fail(exitBadInput, "simrun real: %v", err)
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644); err != nil {
			return fail(exitBadInput, "simrun real: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
			return fail(exitBadInput, "simrun real: %v", err)
		}
		fmt.Fprintf(stderr, "repetition %d/%d done in %.0f s\n", i, reps, time.Since(t).Seconds())
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
