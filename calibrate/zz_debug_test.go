package calibrate

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rebalsim/rebalsim/harness"
)

func TestZZDebug(t *testing.T) {
	dir := os.Getenv("CALDBG_REP")
	if dir == "" {
		t.Skip()
	}
	ss := SuiteScenario{Name: "x", Source: os.Getenv("CALDBG_SC")}
	ss.Data, _ = os.ReadFile(ss.Source)
	sc, err := ss.ForVersion(os.Getenv("CALDBG_V"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := readRep(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, notes := Match(sc, r)
	fmt.Println(notes)
	for _, g := range m.Groups {
		fmt.Printf("cohort %s-%d at %v\n", g.ID, g.FirstIndex, g.Start.At)
	}
	for _, f := range m.Faults {
		fmt.Printf("fault %s %s at %v\n", f.Kind, f.Target, f.At)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		res, err := harness.Run(m, seed, harness.Options{KeepTrace: seed == 1})
		if seed == 1 && os.Getenv("CALDBG_TRACE") != "" {
			for _, e := range res.Trace {
				k := string(e.Kind)
				if strings.Contains(os.Getenv("CALDBG_TRACE"), k) {
					fmt.Printf("%10.3f %-10s %-16s %s %s %s gen=%d n=%d %v\n", float64(e.At)/1e9, e.Node, k, e.State, e.Reason, e.Detail, e.Gen, e.Count, e.Partitions)
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		g := res.Summary.Groups[0]
		fmt.Printf("seed %d first fault %d gens %d leaves %d moved %d unowned %.1f after %.1f double %.1f ev %d false %d\n", seed, g.FirstFaultMs, g.Generations, g.Leaves, g.PartitionsMoved, g.UnownedPartitionSeconds, g.UnownedPartitionSecondsAfterFirstFault, g.DoubleOwnedPartitionSeconds, g.Evictions, g.FalseEvictions)
		for _, rb := range g.Rebalances {
			fmt.Printf("  %+v\n", rb)
		}
	}
}
