package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rebalsim/rebalsim/harness"
	"github.com/rebalsim/rebalsim/scenario"
)

// The anomaly oracles outside explore: `run`, `explain` and `shrink` judge
// a run with the same oracles as `simrun explore`, so that a finding's
// reproduce line shows the finding (and exits non-zero) for whoever it is
// handed to.

// addOraclesFlag adds --oracles to a command.
func addOraclesFlag(fs *pflag.FlagSet) *string {
	s := new(string)
	fs.StringVar(s, "oracles", "", "judge the run with these anomaly `ORACLES` (all, none, or comma-separated names: "+
		strings.Join(scenario.OracleNames, ", ")+"); default: the scenario's oracles: block, else none")
	return s
}

// resolveOracles turns --oracles (and the oracle names --fail-on lists)
// into the oracles that judge the run, in scenario.OracleNames order. With
// no --oracles, a scenario with an `oracles:` block is judged by every
// oracle the block leaves enabled, and one without is not judged.
func resolveOracles(spec string, sc *scenario.Scenario, failOn []string) ([]string, error) {
	var on []string
	switch spec = strings.TrimSpace(spec); spec {
	case "":
		if sc.Oracles != nil {
			for _, n := range scenario.OracleNames {
				if sc.Oracles.Enabled(n) {
					on = append(on, n)
				}
			}
		}
	case "all":
		on = slices.Clone(scenario.OracleNames)
	case "none":
	default:
		names, err := checkNames("--oracles", spec, "oracle", scenario.OracleNames)
		if err != nil {
			return nil, fmt.Errorf("%w (or all, none)", err)
		}
		on = names
	}
	for _, c := range failOn {
		if slices.Contains(scenario.OracleNames, c) {
			on = append(on, c) // failing on an oracle judges the run by it
		}
	}
	var out []string
	for _, n := range scenario.OracleNames {
		if slices.Contains(on, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// judgedBy returns a copy of sc whose oracles are exactly names (the others
// disabled), keeping the thresholds of its oracles: block.
func judgedBy(sc *scenario.Scenario, names []string) *scenario.Scenario {
	c := *sc
	o := scenario.Oracles{}
	if sc.Oracles != nil {
		o = *sc.Oracles
	}
	o.Disable = nil
	for _, n := range scenario.OracleNames {
		if !slices.Contains(names, n) {
			o.Disable = append(o.Disable, n)
		}
	}
	c.Oracles = &o
	return &c
}

// oracleVerdict is one oracle's verdict on a run (`simrun run --json`'s
// "oracles"): one entry per finding of an oracle that fired, one with
// fired=false for an oracle that did not.
type oracleVerdict struct {
	Name   string `json:"name"`
	Fired  bool   `json:"fired"`
	Group  string `json:"group,omitempty"`
	Node   string `json:"node,omitempty"`
	Detail string `json:"detail,omitempty"`
	AtMs   int64  `json:"at_ms"`
}

// verdicts lists the verdict of every oracle of names on the findings of
// harness.RunOracles (invariant violations, which it lists too, are the
// summary's own and left out).
func verdicts(names []string, fs []harness.Finding) []oracleVerdict {
	out := []oracleVerdict{}
	for _, n := range names {
		fired := false
		for _, f := range fs {
			if f.Oracle == n {
				fired = true
				out = append(out, oracleVerdict{Name: n, Fired: true, Group: f.Group, Node: f.Node, Detail: f.Message, AtMs: f.AtMs})
			}
		}
		if !fired {
			out = append(out, oracleVerdict{Name: n})
		}
	}
	return out
}

// firedOracles is the names of the oracles that fired, in verdict order.
func firedOracles(vs []oracleVerdict) []string {
	var out []string
	for _, v := range vs {
		if v.Fired && !slices.Contains(out, v.Name) {
			out = append(out, v.Name)
		}
	}
	return out
}

// printVerdicts writes the oracles' verdicts for the human output.
func printVerdicts(w io.Writer, vs []oracleVerdict) {
	if len(vs) == 0 {
		return
	}
	var held []string
	for _, v := range vs {
		if !v.Fired {
			held = append(held, v.Name)
		}
	}
	fired := firedOracles(vs)
	fmt.Fprintf(w, "oracles: %d judged, %d fired\n", len(fired)+len(held), len(fired))
	for _, v := range vs {
		if v.Fired {
			fmt.Fprintf(w, "  FIRED %s at %s: %s\n", v.Name, fmtMs(v.AtMs), v.Detail)
		}
	}
	if len(held) > 0 {
		fmt.Fprintf(w, "  quiet: %s\n", strings.Join(held, ", "))
	}
}

// fmtMs prints a trace instant in seconds, as the timeline does.
func fmtMs(ms int64) string { return fmt.Sprintf("%.3f s", float64(ms)/1000) }
