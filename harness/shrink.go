package harness

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rebalsim/rebalsim/scenario"
)

// ExpandFaults is the run's whole fault timeline for seed: the file's faults
// and the ones the swarm draws, sorted. A scenario with these faults and no
// swarm block runs exactly as the original (the swarm draws from its own
// streams, so removing it perturbs nothing else).
func ExpandFaults(sc *scenario.Scenario, seed uint64) []scenario.Fault {
	return expandFaults(sc, seed)
}

// ShrinkResult is what Shrink found.
type ShrinkResult struct {
	Faults []scenario.Fault // a 1-minimal fault timeline that still shows the property
	From   int              // faults in the expanded original timeline
	Runs   int              // simulator runs spent
}

// Shrink delta-debugs a run's fault timeline (Zeller's ddmin): it returns a
// subset of ExpandFaults(sc, seed) such that the run with only those faults
// (and no swarm) still satisfies holds, and removing any single one of them
// does not. Each candidate is one deterministic run, so the result is
// reproducible with the same seed. maxRuns bounds the search (0: 5,000).
func Shrink(sc *scenario.Scenario, seed uint64, holds func(*Summary) bool, maxRuns int) (*ShrinkResult, error) {
	var runErr error
	res, err := ShrinkScenario(sc, seed, func(c *scenario.Scenario) bool {
		r, err := Run(c, seed, Options{})
		if err != nil {
			runErr = err
			return false
		}
		return holds(&r.Summary)
	}, maxRuns)
	if runErr != nil {
		return nil, runErr
	}
	return res, err
}

// ShrinkScenario is Shrink with the property judged on the candidate
// scenario itself (the file's faults replaced by a subset, no swarm), for
// properties a Summary does not hold, such as an oracle firing
// (RunOracles). holds runs the candidate for seed itself.
func ShrinkScenario(sc *scenario.Scenario, seed uint64, holds func(*scenario.Scenario) bool, maxRuns int) (*ShrinkResult, error) {
	if maxRuns <= 0 {
		maxRuns = 5000
	}
	res := &ShrinkResult{}
	all := ExpandFaults(sc, seed)
	for i := range all {
		all[i].Swarm = false
	}
	res.From = len(all)
	test := func(fs []scenario.Fault) (bool, error) {
		if res.Runs >= maxRuns {
			return false, fmt.Errorf("shrink: gave up after %d runs", maxRuns)
		}
		res.Runs++
		c := *sc
		c.Swarm = nil
		c.Faults = fs
		return holds(&c), nil
	}
	ok, err := test(all)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("shrink: the run does not show the property (with its swarm written out as explicit faults)")
	}
	cur := all
	n := 2
	for len(cur) >= 2 {
		chunks := split(cur, n)
		reduced := false
		for i := range chunks { // try each complement first: the usual big win
			comp := complement(chunks, i)
			if ok, err := test(comp); err != nil {
				return nil, err
			} else if ok {
				cur, n, reduced = comp, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			for _, c := range chunks {
				if len(c) == len(cur) {
					continue
				}
				if ok, err := test(c); err != nil {
					return nil, err
				} else if ok {
					cur, n, reduced = c, 2, true
					break
				}
			}
		}
		if !reduced {
			if n >= len(cur) {
				break
			}
			n = min(2*n, len(cur))
		}
	}
	if len(cur) == 1 {
		if ok, err := test(nil); err == nil && ok {
			cur = nil
		}
	}
	res.Faults = slices.Clone(cur)
	return res, nil
}

func split(fs []scenario.Fault, n int) [][]scenario.Fault {
	out := make([][]scenario.Fault, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := i*len(fs)/n, (i+1)*len(fs)/n
		if lo < hi {
			out = append(out, fs[lo:hi])
		}
	}
	return out
}

func complement(chunks [][]scenario.Fault, skip int) []scenario.Fault {
	var out []scenario.Fault
	for i, c := range chunks {
		if i != skip {
			out = append(out, c...)
		}
	}
	return out
}
