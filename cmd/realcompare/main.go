// Command realcompare sets `simrun real` repetitions beside `simrun run`
// on the same Kafka lines:
//
//	go run ./cmd/realcompare [-seeds N] DIR... > results/real/COMPARE.md
//
// Each DIR is one `simrun real --out DIR` directory (rep-001, rep-002, …;
// finished ones only). Its scenario is run on seeds 1..N (default 20) with
// coordinator.profile and each group's client.profile set to the broker's
// and the clients' Kafka lines from meta.json; a dropped network.latency
// (`--drop-unsupported`) runs as the testbed's veth latency. Every figure
// comes from the two summaries through calibrate.FigureValues, the
// calibration's one definition (docs/CALIBRATE.md, "Figures and
// verdicts"), or experiments.RunFigures for the coordinator-dead marks;
// the whole-run figures that a fault-free initial join
// dominates (initial_join_ms, unowned_partition_seconds, partitions_moved)
// and notice_spread_ms (it needs the runs' notice instants) are left out.
// Intervals: the normal approximation of the mean's 95 % interval, clipped
// at 0 (every figure is a duration, a count or partition-seconds).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/rebalsim/rebalsim/calibrate"
	"github.com/rebalsim/rebalsim/experiments"
	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/realkafka"
	"github.com/rebalsim/rebalsim/scenario"
)

// shown are the figures printed, in this order: calibrate's, and the
// coordinator-dead marks from the experiments' run figures
// (experiments.RunFigures, which calibrate's figures build on).
var shown = []string{"fault_to_rebalance_ms", "fault_rebalance_ms", "settled_after_fault_ms",
	"failover_recovery_ms", "coordinator_dead_marks", "false_coordinator_dead_marks",
	"evictions", "false_evictions", "leaves", "fences", "generations", "partitions_moved_after_first_fault",
	"unowned_partition_seconds_after_first_fault", "double_owned_partition_seconds"}

// values is one run's value of every shown figure.
func values(sc *scenario.Scenario, s *harness.Summary) []float64 {
	cal, run, names := calibrate.FigureValues(sc, s), experiments.RunFigures(sc, s), experiments.FigureNames()
	out := make([]float64, len(shown))
	for k, name := range shown {
		if i := slices.IndexFunc(calibrate.Figures, func(f calibrate.Figure) bool { return f.Name == name }); i >= 0 {
			out[k] = cal[i]
		} else if j := slices.Index(names, name); j >= 0 {
			out[k] = run[j]
		} else {
			panic("realcompare: no figure " + name)
		}
	}
	return out
}

func main() {
	seeds := flag.Int("seeds", 20, "simulated seeds `N` per directory")
	flag.Parse()
	if flag.NArg() == 0 || *seeds < 1 {
		fmt.Fprintln(os.Stderr, "usage: realcompare [-seeds N] DIR...")
		os.Exit(2)
	}
	for _, dir := range flag.Args() {
		if err := compare(strings.TrimSuffix(dir, "/"), *seeds); err != nil {
			fmt.Fprintf(os.Stderr, "realcompare: %s: %v\n", dir, err)
			os.Exit(1)
		}
	}
}

// kafkaLine is a version's profile: "4.4.0" → "kafka-4.4".
func kafkaLine(v string) string {
	f := strings.SplitN(v, ".", 3)
	return "kafka-" + strings.Join(f[:min(2, len(f))], ".")
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func compare(dir string, seeds int) error {
	reps, _ := filepath.Glob(filepath.Join(dir, "rep-*", "done"))
	if len(reps) == 0 {
		fmt.Printf("%s: no finished repetition\n\n", dir)
		return nil
	}
	slices.Sort(reps)
	var metas []realkafka.Meta
	var real []harness.Summary
	for _, done := range reps {
		rd := filepath.Dir(done)
		var m realkafka.Meta
		var s harness.Summary
		if err := readJSON(filepath.Join(rd, "meta.json"), &m); err != nil {
			return err
		}
		if err := readJSON(filepath.Join(rd, "summary.json"), &s); err != nil {
			return err
		}
		metas, real = append(metas, m), append(real, s)
	}
	meta := metas[0]
	sets := []string{"coordinator.profile=" + kafkaLine(meta.BrokerVersion)}
	if slices.ContainsFunc(meta.Dropped, func(d string) bool { return strings.HasPrefix(d, "network.latency") }) {
		sets = append(sets, fmt.Sprintf("network.latency=%dus", realkafka.VethOneWay.Microseconds()))
	}
	for i, g := range meta.Groups {
		sets = append(sets, fmt.Sprintf("groups[%d].client.profile=%s", i, kafkaLine(meta.ClientVersions[g.ID])))
	}
	overrides := make([]scenario.Override, len(sets))
	for i, s := range sets {
		p, v, _ := strings.Cut(s, "=")
		overrides[i] = scenario.Override{Path: p, Value: v}
	}
	source, data, err := scenario.Read(meta.Scenario)
	if err != nil {
		return err
	}
	if data, err = scenario.Overridden(source, data, overrides); err != nil {
		return err
	}
	sc, err := scenario.Parse(source, data)
	if err != nil {
		return err
	}
	var sim [][]float64
	for seed := 1; seed <= seeds; seed++ {
		res, err := harness.Run(sc, uint64(seed), harness.Options{})
		if err != nil {
			return err
		}
		sim = append(sim, values(sc, &res.Summary))
	}
	var realv [][]float64
	walls := make([]string, len(metas))
	for i := range real {
		realv = append(realv, values(sc, &real[i]))
		walls[i] = strconv.FormatInt((metas[i].WallMs+500)/1000, 10)
	}
	clients := make([]string, 0, len(meta.ClientVersions))
	for _, g := range meta.Groups {
		clients = append(clients, g.ID+" "+meta.ClientVersions[g.ID])
	}
	fmt.Printf("### %s: broker %s, clients %s\n\n", meta.Scenario, meta.BrokerVersion, strings.Join(clients, ", "))
	dropped := ""
	for _, d := range meta.Dropped {
		dropped += "; dropped: " + d
	}
	fmt.Printf("Real: %d repetition(s), wall time %s s each%s. Simulated: `simrun run %s` seeds 1-%d, --set %s.\n\n",
		len(real), strings.Join(walls, " / "), dropped, meta.Scenario, seeds, strings.Join(sets, " --set "))
	fmt.Println("| figure | real (each repetition) | real mean | simulated mean [95 %] |")
	fmt.Println("|---|---|---:|---:|")
	for i, name := range shown {
		rv, sv := column(realv, i), column(sim, i)
		if len(rv) == 0 && len(sv) == 0 {
			continue
		}
		cells := make([]string, len(rv))
		for k, x := range rv {
			cells[k] = num(x)
		}
		fmt.Printf("| %s | %s | %s | %s |\n", name, orDash(strings.Join(cells, " / ")), meanCell(rv, false, 0), meanCell(sv, true, seeds))
	}
	fmt.Println()
	return nil
}

// column is figure i's values over the runs that have one.
func column(runs [][]float64, i int) []float64 {
	var out []float64
	for _, r := range runs {
		if !math.IsNaN(r[i]) {
			out = append(out, r[i])
		}
	}
	return out
}

func meanCell(xs []float64, interval bool, of int) string {
	if len(xs) == 0 {
		return "—"
	}
	mean := stat.Mean(xs, nil)
	s := num(mean)
	if interval && len(xs) > 1 {
		h := 1.96 * stat.StdDev(xs, nil) / math.Sqrt(float64(len(xs)))
		s += fmt.Sprintf(" [%s, %s]", num(max(mean-h, 0)), num(mean+h))
	}
	if interval && len(xs) < of {
		s += fmt.Sprintf(" (%d seeds)", len(xs))
	}
	return s
}

func num(x float64) string {
	if math.Abs(x) >= 100 {
		return strconv.FormatFloat(math.Round(x), 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
