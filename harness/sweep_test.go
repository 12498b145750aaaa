// VOPR-style seed sweep (STYLE.md §16): many seeds of a scenario with a
// random fault schedule, each run watched by every invariant checker (safety
// while faults happen, liveness once they stop). A failure prints the seed
// and the command that reproduces it. Raise the count with -seeds=N.
package harness

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/rebalsim/rebalsim/scenario"
)

var sweepSeeds = flag.Int("seeds", 40, "seeds for TestSweepSeeds")

func TestSweepSeeds(t *testing.T) {
	sc := load(t, "testdata/swarm.yaml")
	for seed := uint64(1); seed <= uint64(*sweepSeeds); seed++ {
		res, err := Run(sc, seed, Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, v := range res.Summary.InvariantViolations {
			t.Errorf("seed %d: %s at %d ms: %s\nreproduce with: go run ./cmd/simrun run harness/testdata/swarm.yaml --seed %d",
				seed, v.Checker, v.AtMs, v.Message, seed)
		}
	}
}

// TestSweepProfiles runs the swarm scenario across client eras, assignors
// and membership kinds, a few seeds each.
func TestSweepProfiles(t *testing.T) {
	src, err := os.ReadFile("testdata/swarm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := max(*sweepSeeds/8, 2)
	for _, prof := range []string{"kafka-2.3", "kafka-2.4", "kafka-2.7", "kafka-2.x", "kafka-3.2", "kafka-3.x"} {
		for _, strat := range []string{"range", "cooperative-sticky", "sticky"} {
			for _, static := range []bool{false, true} {
				if strat == "cooperative-sticky" && prof == "kafka-2.3" {
					continue
				}
				name := fmt.Sprintf("%s/%s/static=%v", prof, strat, static)
				sc, err := scenario.ParseWithOverrides(name, src, []scenario.Override{
					{Path: "groups[0].client.profile", Value: prof},
					{Path: "coordinator.profile", Value: prof},
					{Path: "groups[0].client.partition.assignment.strategy", Value: strat},
					{Path: "groups[0].client.group.instance.id", Value: static},
				})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for seed := uint64(1); seed <= uint64(n); seed++ {
					res, err := Run(sc, seed, Options{})
					if err != nil {
						t.Fatalf("%s seed %d: %v", name, seed, err)
					}
					for _, v := range res.Summary.InvariantViolations {
						t.Errorf("%s seed %d: %s at %d ms: %s", name, seed, v.Checker, v.AtMs, v.Message)
					}
				}
			}
		}
	}
}
