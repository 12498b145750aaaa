package main

import (
	"fmt"

	"github.com/rebalsim/rebalsim/harness"
)

// exitFailOn is the exit status of `simrun run --fail-on C` when condition C
// held in the run.
const exitFailOn = 4

// failOnConditions are the conditions --fail-on accepts, with what each
// means (the help text and INTERFACE.md list them).
var failOnConditions = []struct{ name, doc string }{
	{"invalid", "the run is invalid (a fatal error, a group never Stable, a budget or livelock cut): summary valid=false"},
	{"violations", "an invariant was violated"},
	{"evictions", "any eviction"},
	{"false-evictions", "any false eviction (the member's process was alive)"},
	{"dead-marks", "any coordinator-dead mark"},
	{"false-dead-marks", "any false coordinator-dead mark"},
	{"unstable", "a group was not Stable at the end of the run"},
	{"incomplete", "a settle episode was still open at the end of the run"},
}

// parseFailOn checks a comma-separated --fail-on list.
func parseFailOn(spec string) ([]string, error) {
	var names []string
	for _, f := range failOnConditions {
		names = append(names, f.name)
	}
	return checkNames("--fail-on", spec, "condition", names)
}

// failOn returns a sentence for every condition of conds that holds in s
// (empty: none held). It reads only the summary, so any command that has
// one can use it.
func failOn(conds []string, s *harness.Summary) []string {
	var held []string
	for _, c := range conds {
		n := 0
		for _, g := range s.Groups {
			switch c {
			case "evictions":
				n += g.Evictions
			case "false-evictions":
				n += g.FalseEvictions
			case "dead-marks":
				n += g.CoordinatorDeadMarks
			case "false-dead-marks":
				n += g.FalseCoordinatorDeadMarks
			case "unstable":
				if !g.StableAtEnd {
					n++
				}
			case "incomplete":
				for _, r := range g.Rebalances {
					if r.Incomplete {
						n++
					}
				}
			}
		}
		switch c {
		case "invalid":
			if !s.Valid {
				held = append(held, "invalid: "+s.InvalidReason)
			}
		case "violations":
			if len(s.InvariantViolations) > 0 {
				held = append(held, fmt.Sprintf("violations: %d invariant violations", len(s.InvariantViolations)))
			}
		default:
			if n > 0 {
				held = append(held, fmt.Sprintf("%s: %d", c, n))
			}
		}
	}
	return held
}
