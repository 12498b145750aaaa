package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
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
	{"ORACLE", "an anomaly oracle of that name fired (" + strings.Join(scenario.OracleNames, ", ") + "); the run is judged by it"},
}

// parseFailOn checks a comma-separated --fail-on list.
func parseFailOn(spec string) ([]string, error) {
	var names []string
	for _, f := range failOnConditions {
		names = append(names, f.name)
	}
	names = append(names[:len(names)-1], scenario.OracleNames...) // ORACLE stands for the oracles' names
	return checkNames("--fail-on", spec, "condition", names)
}

// failOn returns a sentence for every condition of conds that holds in s
// or, for an oracle's name, in the oracles' verdicts vs (empty: none held).
func failOn(conds []string, s *harness.Summary, vs []oracleVerdict) []string {
	var held []string
	for _, c := range conds {
		if slices.Contains(scenario.OracleNames, c) {
			for _, v := range vs {
				if v.Name == c && v.Fired {
					held = append(held, fmt.Sprintf("%s fired at %s: %s", c, fmtMs(v.AtMs), v.Detail))
					break
				}
			}
			continue
		}
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
